// Status messages for everyone, screen readers included: one polite live region for
// "Saved." and one assertive region for errors, present in the page from the start
// (a region added at the moment of the message is often not announced).
import { useEffect, useState } from 'preact/hooks';

type Notice = { id: number; text: string; tone: 'info' | 'error' };
let next = 1;
const listeners = new Set<(notice: Notice) => void>();

export function announce(text: string, tone: Notice['tone'] = 'info'): void {
  const notice = { id: next++, text, tone };
  for (const listener of listeners) listener(notice);
}

export function Notices() {
  const [items, setItems] = useState<Notice[]>([]);
  useEffect(() => {
    const add = (notice: Notice) => {
      setItems((current) => [...current.slice(-2), notice]);
      setTimeout(() => setItems((current) => current.filter((n) => n.id !== notice.id)), 6000);
    };
    listeners.add(add);
    return () => listeners.delete(add);
  }, []);
  return (
    <div class="notices">
      <div role="status" aria-live="polite">
        {items
          .filter((n) => n.tone === 'info')
          .map((n) => (
            <p key={n.id} class="notice">
              {n.text}
            </p>
          ))}
      </div>
      <div role="alert" aria-live="assertive">
        {items
          .filter((n) => n.tone === 'error')
          .map((n) => (
            <p key={n.id} class="notice notice-error">
              {n.text}
            </p>
          ))}
      </div>
    </div>
  );
}
