/**
 * Tool answers remembered by the exact text the REST route answered (docs/mcp.md#performance). A
 * tool's result is a pure function of that text, the tool and the zone asked for: the times
 * rewritten in the zone, the output-schema check, the JSON text. The availability routes answer a
 * repeated question with the same remembered bytes, so a repeated tool call skips all of that work;
 * any change in the answer (new busy time, a stale flag, another consent) is other text, another
 * entry. Answers whose zone came from a principal's schedule (a further request whose answer may
 * change) are not remembered.
 */

/**
 * Bounds: the remembered answer texts (each result holds about three times its text more: the parsed
 * answer, its JSON and the JSON-RPC result) and their number.
 */
const MAX_CHARS = 4_000_000;
const MAX_ENTRIES = 512;
/** Larger answers are rare (long lists) and seldom asked twice. */
const MAX_TEXT = 500_000;

export class ToolResultMemo<T> {
  /** `tool\nzone asked for` → the route's answer text → the result. */
  private readonly byTool = new Map<string, Map<string, T>>();
  private chars = 0;
  private entries = 0;

  get(tool: string, zone: string, text: string): T | undefined {
    return this.byTool.get(`${tool}\n${zone}`)?.get(text);
  }

  set(tool: string, zone: string, text: string, result: T): void {
    if (text.length > MAX_TEXT) return;
    if (this.chars + text.length > MAX_CHARS || this.entries >= MAX_ENTRIES) {
      // Cleared at once rather than evicted one by one: what is asked again comes back in one call.
      this.byTool.clear();
      this.chars = 0;
      this.entries = 0;
    }
    const key = `${tool}\n${zone}`;
    let texts = this.byTool.get(key);
    if (!texts) {
      texts = new Map();
      this.byTool.set(key, texts);
    }
    if (texts.has(text)) return;
    texts.set(text, result);
    this.chars += text.length;
    this.entries++;
  }
}
