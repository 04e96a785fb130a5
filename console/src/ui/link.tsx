import type { ComponentChildren } from 'preact';
import { followLink } from '../router.js';

export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean; 'aria-label'?: string }) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      aria-label={props['aria-label']}
      onClick={(event) => followLink(event, props.href)}
    >
      {props.children}
    </a>
  );
}
