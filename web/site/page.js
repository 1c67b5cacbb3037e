// Runs in the <head> of every demo page and of the landing page, before the body is drawn.
// `?embed` (a demo page inside a course page's iframe): show the element alone,
// without the site's header, title, prose and footer; light unless the link says
// `&theme=dark` or `&theme=auto` (the reader's system), as elements in a page are.
// The embedded page tells its parent how tall its content is, so the parent can size the iframe
// (web/lib/headlab-embed.js does): { type: 'headlab:height', height, id } with `height` in CSS
// pixels and `id` the link's `&id=` (null without), on load and whenever the height changes, at
// most once an animation frame. The parent's origin is unknown here, so the message carries
// nothing but that height and goes to any origin ('*'); a { type: 'headlab:measure' } message
// from the parent asks for it again.
// `?lang=es` (with or without `embed`): the page, and so every element on it, speaks that language
// (<html lang>; the elements fall back to English for a language they do not have).
// Then it loads the components, whichever build the page can use: over http(s) the module build
// (headlab-components.js, which fetches only the code of the elements on the page, each with a
// sized "Loading …" box until it arrives), from file:// the classic build
// (headlab-components.classic.js, with the wasm inside), as browsers refuse module scripts there.
// Both sit one folder above this file in dist/ (the landing page's only element is its theme toggle).
{
  const params = new URLSearchParams(location.search);
  const lang = params.get('lang');
  if (lang && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(lang)) document.documentElement.lang = lang;
  if (params.has('embed')) {
    const root = document.documentElement;
    root.classList.add('embed');
    const theme = params.get('theme');
    root.dataset.embedTheme = theme === 'dark' || theme === 'auto' ? theme : 'light';
    if (window.parent !== window) {
      const id = params.get('id');
      let sent = -1;
      let pending = false;
      const post = (force = false) => {
        const height = Math.ceil(root.getBoundingClientRect().height);
        if (!force && height === sent) return;
        sent = height;
        window.parent.postMessage({ type: 'headlab:height', height, id }, '*');
      };
      const schedule = () => {
        if (pending) return;
        pending = true;
        requestAnimationFrame(() => { pending = false; post(); });
      };
      new ResizeObserver(schedule).observe(root);
      window.addEventListener('load', () => post(true));
      window.addEventListener('message', (event) => {
        if (event.source === window.parent && event.data?.type === 'headlab:measure') post(true);
      });
    }
  }
}
{
  const here = document.currentScript?.src;
  if (here) {
    const script = document.createElement('script');
    if (location.protocol === 'file:') {
      // As `defer` would run it: once the document is parsed.
      script.src = new URL('../headlab-components.classic.js', here).href;
      document.addEventListener('DOMContentLoaded', () => document.head.append(script), { once: true });
    } else {
      script.type = 'module';
      script.src = new URL('../headlab-components.js', here).href;
      document.head.append(script);
    }
  }
}
