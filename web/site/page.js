// Runs in the <head> of every demo page, before the body is drawn.
// `?embed` (a demo page inside a course page's iframe): show the element alone,
// without the site's header, title, prose and footer; light unless the link says
// `&theme=dark` or `&theme=auto` (the reader's system), as elements in a page are.
const params = new URLSearchParams(location.search);
if (params.has('embed')) {
  document.documentElement.classList.add('embed');
  const theme = params.get('theme');
  document.documentElement.dataset.embedTheme = theme === 'dark' || theme === 'auto' ? theme : 'light';
}
