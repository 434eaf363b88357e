import { h } from 'preact';
import htm from 'htm';

// html is Preact's h bound to htm's tagged templates: markup without a
// compile step or eval. Interpolated values are always text or props,
// never parsed as markup, so run content cannot inject any.
export const html = htm.bind(h);
