/** A form that sends to the API: busy while it does, and what the API refused (lib/api.ts Failure). */
import { useState } from 'preact/hooks';
import { type Failure, failure, NO_FAILURE } from './api.js';

/** A form field's text, trimmed ('' when absent). */
export function textOf(f: FormData): (name: string) => string {
  return (name) => String(f.get(name) ?? '').trim();
}

/**
 * The form's submit handler around `send` (given the form's data and the form), with its state: busy
 * until `send` settles, and the failure it threw (cleared when sent again).
 */
export function useSubmit(send: (f: FormData, form: HTMLFormElement) => Promise<void>): {
  fail: Failure;
  busy: boolean;
  submit: (e: Event) => Promise<void>;
} {
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    setFail(NO_FAILURE);
    try {
      await send(new FormData(form), form);
    } catch (err) {
      setFail(failure(err));
    } finally {
      setBusy(false);
    }
  };
  return { fail, busy, submit };
}
