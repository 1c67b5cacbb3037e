// Runs in the <head> of every demo page, before the body is drawn.
// `?embed` (a demo page inside a course page's iframe): show the element alone,
// without the site's header, title, prose and footer; light unless the link says
// `&theme=dark` or `&theme=auto` (the reader's system), as elements in a page are.
// The embedded page tells its parent how tall its content is, so the parent can size the iframe
// (web/lib/headlab-embed.js does): { type: 'headlab:height', height, id } with `height` in CSS
// pixels and `id` the link's `&id=` (null without), on load and whenever the height changes, at
// most once an animation frame. The parent's origin is unknown here, so the message carries
// nothing but that height and goes to any origin ('*'); a { type: 'headlab:measure' } message
// from the parent asks for it again.
{
  const params = new URLSearchParams(location.search);
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
