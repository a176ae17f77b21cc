/**
 * A small namespace-aware XML reader for WebDAV multistatus answers. It builds a tree of elements
 * with their namespace URI, local name, attributes and text. No DTDs and no custom entities (a
 * DOCTYPE is rejected, which also rules out entity-expansion attacks); CDATA and the predefined and
 * numeric character references are handled.
 */

export interface XmlElement {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Concatenated character data directly inside this element. */
  text: string;
}

export class XmlError extends Error {
  override readonly name = 'XmlError';
}

const NAME = /^[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?/;
const ATTR = /^\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')/;

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g, (_m, e: string) => {
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'amp') return '&';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    const code = e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
  });
}

interface Open {
  el: XmlElement;
  qname: string;
  scope: Map<string, string>;
}

export function parseXml(xml: string): XmlElement {
  let i = 0;
  const n = xml.length;
  let root: XmlElement | undefined;
  const stack: Open[] = [];
  const rootScope = new Map<string, string>([['xml', 'http://www.w3.org/XML/1998/namespace']]);

  const text = (s: string): void => {
    const top = stack[stack.length - 1];
    if (top) top.el.text += s;
    else if (s.trim() !== '') throw new XmlError('text outside the root element');
  };

  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      text(decodeEntities(xml.slice(i)));
      break;
    }
    if (lt > i) text(decodeEntities(xml.slice(i, lt)));
    i = lt;
    if (xml.startsWith('<?', i)) {
      const end = xml.indexOf('?>', i + 2);
      if (end < 0) throw new XmlError('unterminated processing instruction');
      i = end + 2;
    } else if (xml.startsWith('<!--', i)) {
      const end = xml.indexOf('-->', i + 4);
      if (end < 0) throw new XmlError('unterminated comment');
      i = end + 3;
    } else if (xml.startsWith('<![CDATA[', i)) {
      const end = xml.indexOf(']]>', i + 9);
      if (end < 0) throw new XmlError('unterminated CDATA');
      text(xml.slice(i + 9, end));
      i = end + 3;
    } else if (xml.startsWith('<!', i)) {
      throw new XmlError('DOCTYPE and declarations are not accepted');
    } else if (xml.startsWith('</', i)) {
      const end = xml.indexOf('>', i + 2);
      if (end < 0) throw new XmlError('unterminated end tag');
      const qname = xml.slice(i + 2, end).trim();
      const top = stack.pop();
      if (!top || top.qname !== qname) throw new XmlError(`mismatched end tag </${qname}>`);
      i = end + 1;
    } else {
      i = openTag(xml, i + 1, stack, rootScope, (el) => {
        if (root) throw new XmlError('more than one root element');
        root = el;
      });
    }
  }
  if (stack.length > 0) throw new XmlError(`unclosed element <${stack[stack.length - 1]?.qname}>`);
  if (!root) throw new XmlError('no root element');
  return root;
}

function openTag(
  xml: string,
  start: number,
  stack: Open[],
  rootScope: Map<string, string>,
  setRoot: (el: XmlElement) => void,
): number {
  let i = start;
  const m = NAME.exec(xml.slice(i, i + 256));
  if (!m) throw new XmlError(`bad tag at ${start}`);
  const qname = m[0];
  i += qname.length;
  const raw: [string, string][] = [];
  for (;;) {
    const rest = xml.slice(i, i + 4096);
    const a = ATTR.exec(rest);
    if (!a) break;
    raw.push([a[1] as string, decodeEntities(a[3] ?? a[4] ?? '')]);
    i += a[0].length;
  }
  while (i < xml.length && /\s/.test(xml[i] as string)) i++;
  let selfClosing = false;
  if (xml.startsWith('/>', i)) {
    selfClosing = true;
    i += 2;
  } else if (xml[i] === '>') {
    i += 1;
  } else {
    throw new XmlError(`bad tag <${qname}>`);
  }
  const parent = stack[stack.length - 1];
  const scope = new Map(parent ? parent.scope : rootScope);
  const attrs: Record<string, string> = {};
  for (const [k, v] of raw) {
    if (k === 'xmlns') scope.set('', v);
    else if (k.startsWith('xmlns:')) scope.set(k.slice(6), v);
    else attrs[k] = v;
  }
  const colon = qname.indexOf(':');
  const prefix = colon >= 0 ? qname.slice(0, colon) : '';
  const name = colon >= 0 ? qname.slice(colon + 1) : qname;
  const ns = scope.get(prefix);
  if (ns === undefined && prefix !== '') throw new XmlError(`undeclared prefix ${prefix}`);
  const el: XmlElement = { ns: ns ?? '', name, attrs, children: [], text: '' };
  if (parent) parent.el.children.push(el);
  else setRoot(el);
  if (!selfClosing) stack.push({ el, qname, scope });
  return i;
}

export function children(el: XmlElement, ns: string, name: string): XmlElement[] {
  return el.children.filter((c) => c.ns === ns && c.name === name);
}

export function child(el: XmlElement, ns: string, name: string): XmlElement | undefined {
  return el.children.find((c) => c.ns === ns && c.name === name);
}

export function descendants(el: XmlElement, ns: string, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement): void => {
    for (const c of e.children) {
      if (c.ns === ns && c.name === name) out.push(c);
      walk(c);
    }
  };
  walk(el);
  return out;
}

/** Escapes text for element content or a double-quoted attribute. */
export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) =>
    c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : c === '"' ? '&quot;' : '&apos;',
  );
}
