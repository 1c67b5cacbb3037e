// The shared page checks (checks.mjs) in WebKitGTK's MiniBrowser (Safari's engine) under
// a virtual X display, through selenium-webdriver and WebKitWebDriver.
// Run: node scripts/test.mjs webkit
import { engineSuite } from './checks.mjs';
import { webkit } from './drivers.mjs';

engineSuite(webkit);
