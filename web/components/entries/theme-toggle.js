// One element on its own: importing this module registers <headlab-theme-toggle> (and nothing else).
import { HeadlabThemeToggle } from '../headlab-theme-toggle.js';

HeadlabThemeToggle.define();
export { HeadlabThemeToggle };
