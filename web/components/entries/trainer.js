// One element on its own: importing this module registers <headlab-trainer> (and nothing else).
import { HeadlabTrainer } from '../headlab-trainer.js';

HeadlabTrainer.define();
export { HeadlabTrainer };
