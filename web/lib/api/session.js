// What Trainer and LanguageModel share: the Embind object they drive and its lifetime.
import { requireDim } from './checks.js';
import { endModule } from './threaded-module.js';

/** Frees the Embind object, and ends the threaded module that holds it (and its threads), if any. */
function free({ core, module }) {
  if (module) endModule(module, core);
  else if (!core.isDeleted()) core.delete();
}

// Trainers not disposed by their owner are freed when garbage-collected.
const trainerFinalizer = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(free) : null;

/**
 * @private What Trainer and LanguageModel share: the Embind object they drive, freed by
 * dispose() (or by the finalizer when one is dropped undisposed), and their argument checks.
 */
export class TrainingSession {
  /** `module`: the threaded module that holds `core` alone (ended with it), or null. */
  constructor(lab, core, name, noun, module = null) {
    this._lab = lab;
    this._core = core;
    this._module = module;
    this._name = name;  // 'Trainer', 'LanguageModel': how errors name the method
    this._noun = noun;  // 'trainer', 'model'
    trainerFinalizer?.register(this, { core, module }, this);
  }

  /** @private */
  _live(fn) {
    if (!this._core) throw new TypeError(`${this._name}.${fn}: this ${this._noun} has been disposed`);
    return this._core;
  }

  /** @private A count in 1..max, or the default when undefined. */
  _count(fn, name, n, fallback, max) {
    if (n === undefined) return fallback;
    const v = requireDim(`${this._name}.${fn}`, name, n);
    if (v > max) throw new RangeError(`${this._name}.${fn}: ${name} must be at most ${max}, got ${v}`);
    return v;
  }

  /**
   * Frees the wasm memory (and ends the model's threads, if it has any). Calling any method
   * afterwards throws; dispose() twice is fine.
   */
  dispose() {
    if (!this._core) return;
    trainerFinalizer?.unregister(this);
    free({ core: this._core, module: this._module });
    this._core = this._module = null;
  }

  /**
   * @private Disposes this session but leaves its threaded module running, for a new session
   * that takes it over (createLanguageModel's `replacing`): the core is deleted (its threads
   * joined, their Workers back in the module's pool).
   */
  _giveUpModule() {
    trainerFinalizer?.unregister(this);
    if (!this._core.isDeleted()) this._core.delete();
    this._core = this._module = null;
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}
