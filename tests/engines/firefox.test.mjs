// The shared page checks (checks.mjs) in Debian's Firefox ESR, headless, through
// puppeteer-core over WebDriver BiDi. Run: node scripts/test.mjs firefox
import { engineSuite } from './checks.mjs';
import { firefox } from './drivers.mjs';

engineSuite(firefox);
