// The Worker of <headlab-model-explorer> (bundled as dist/headlab-explorer-worker.js): holds
// the model (explorer-session.js) and answers the page through session-host.js. Downloads
// from the hub run here too, so a 500 MB model never blocks the page.
import { getLab } from '../lab/lab.js';
import { ExplorerSession } from '../../../lib/teach/explorer-session.js';
import { hostSession } from './session-host.js';

let session = null;
// A fetch the page's Content-Security-Policy blocks fails with a bare TypeError; the violation
// event says what was blocked, so the session can tell the learner.
self.addEventListener('securitypolicyviolation', (e) => {
  if (session) session.violation = { blockedURI: e.blockedURI, directive: e.effectiveDirective || e.violatedDirective };
});

hostSession((post) => getLab().then(async (lab) => {
  session = await ExplorerSession.open(lab, post);
  return session;
}));
