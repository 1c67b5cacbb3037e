// The Worker of <headlab-language-model> (bundled as dist/headlab-lm-worker.js):
// holds its training session (lm-session.js) and answers the page through session-host.js.
import { getLab } from './lab.js';
import { LmSession } from './lm-session.js';
import { hostSession, schedule } from './session-host.js';

hostSession((post) => getLab().then((lab) => LmSession.open(lab, post, { chunkMs: 25, schedule })));
