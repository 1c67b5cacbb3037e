// What an element module needs from the DOM at load time, with a stand-in where there is none
// (Node, server rendering: Next.js, Astro, SvelteKit, VitePress import modules there). The module
// then loads and exports its class (tag, props, observedAttributes readable); define() registers
// nothing without customElements, and the element works once the page loads it in a browser.

/** HTMLElement where it exists, else an empty class to extend. */
export const ElementBase = typeof HTMLElement === 'undefined' ? class {} : HTMLElement;

/** Whether this environment can register custom elements. */
export const canDefineElements = () => typeof customElements !== 'undefined';
