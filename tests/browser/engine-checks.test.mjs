// The page checks shared with the Firefox and WebKit stages (tests/engines/checks.mjs),
// in Chromium through playwright-core, with the same injected error capture.
import { engineSuite } from '../engines/checks.mjs';
import { chromium } from '../engines/drivers.mjs';

engineSuite(chromium);
