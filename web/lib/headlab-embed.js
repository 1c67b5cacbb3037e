// HeadLab's iframe resizer for course pages (optional, no dependencies, a classic script):
//   <script src="https://your.host/headlab/headlab-embed.js" data-headlab-resize defer></script>
//   <iframe data-headlab src="https://your.host/headlab/demos/worked-example/index.html?embed" …></iframe>
// A demo page opened with ?embed posts { type: 'headlab:height', height, id } to its parent on load
// and whenever its content's height changes (web/site/page.js). This script sets the height of the
// <iframe data-headlab> that sent it, so the demo never scrolls inside its frame. A message counts
// only when it comes from one of those iframes' windows and from the origin of that iframe's src.
// Frames that posted before this script ran are asked again ({ type: 'headlab:measure' }).
(() => {
  if (window.headlabEmbed) return;  // loaded twice: one listener is enough
  const FRAMES = 'iframe[data-headlab]';
  const MAX_HEIGHT = 100_000;
  const originOf = (frame) => {
    try { return new URL(frame.src, location.href).origin; } catch { return null; }
  };
  const onMessage = (event) => {
    const data = event.data;
    if (data === null || typeof data !== 'object' || data.type !== 'headlab:height') return;
    const height = Number(data.height);
    if (!Number.isFinite(height) || height <= 0 || height > MAX_HEIGHT) return;
    for (const frame of document.querySelectorAll(FRAMES)) {
      if (frame.contentWindow !== event.source) continue;
      if (event.origin !== originOf(frame)) return;
      frame.style.height = `${Math.ceil(height)}px`;
      return;
    }
  };
  // The request carries nothing and may reach a frame still on about:blank: it goes to any origin.
  const measureAll = () => {
    for (const frame of document.querySelectorAll(FRAMES)) frame.contentWindow?.postMessage({ type: 'headlab:measure' }, '*');
  };
  window.addEventListener('message', onMessage);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', measureAll, { once: true });
  else measureAll();
  window.headlabEmbed = { measureAll };
})();
