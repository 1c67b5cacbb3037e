// The threaded module's own binding (linked with bindings.cpp, which registers
// the Shape and ForwardCall types): a ParallelMha driven from JavaScript.
// JavaScript starts a pass and awaits Atomics.waitAsync on finishedAddress(),
// which the last thread to finish wakes (where waitAsync is missing it blocks
// in wait()). It ends the threads without blocking (a page's main thread must
// not; Emscripten warns at every pthread_join there): requestStop(), await
// exitedAddress() reaching threads() (the last thread to leave wakes it),
// tryJoin() until true, then delete(), which has nothing left to join.
#include <emscripten/bind.h>
#include <emscripten/threading.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "forward_call.hpp"
#include "headlab/mha_parallel.hpp"

namespace {

using headlab::bindings::ForwardJs;

void wake_waiters(const std::atomic<std::uint32_t>* word) {
  emscripten_futex_wake(const_cast<std::atomic<std::uint32_t>*>(word), INT_MAX);
}

class ParallelLayerJs {
 public:
  // layer: the shape's dModel, numHeads, dK, dV (resolved) and the weights' addresses, which
  // are copied (the caller may free them afterwards). JS checked threads <= numHeads.
  ParallelLayerJs(const ForwardJs& layer, double threads)
      : dims_(headlab::bindings::to_shape(layer.shape)),
        mha_(new headlab::ParallelMha(dims_, headlab::bindings::weights_of(layer),
                                      static_cast<std::size_t>(threads))) {
    mha_->on_done = wake_waiters;
    mha_->on_exited = wake_waiters;
  }

  // Checks the shape, allocates what the call needs and starts it; "" or an error.
  std::string start(const ForwardJs& f) {
    headlab::MhaShape s = headlab::bindings::to_shape(f.shape);
    std::string err = headlab::mha_resolve_shape(s);
    if (!err.empty()) return err;
    if (s.d_model != dims_.d_model || s.num_heads != dims_.num_heads || s.d_k != dims_.d_k || s.d_v != dims_.d_v)
      return "the call's dModel, numHeads, dK, dV differ from the layer's";
    if (!mha_->reserve(s, headlab::bindings::output_only(f), f.concat != 0))
      return "out of memory: the threads' workspaces for this shape do not fit in the wasm heap";
    mha_->start(s, headlab::bindings::inputs_of(f), headlab::bindings::outputs_of(f));
    return "";
  }

  void wait() { mha_->wait(); }
  double finished_address() const { return static_cast<double>(reinterpret_cast<std::uintptr_t>(&mha_->finished())); }
  double finished() const { return mha_->finished().load(); }
  void request_stop() { mha_->request_stop(); }
  bool try_join() { return mha_->try_join(); }
  double exited_address() const {
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(&mha_->exited()));
  }
  double threads() const { return static_cast<double>(mha_->threads()); }

 private:
  headlab::MhaShape dims_;
  std::unique_ptr<headlab::ParallelMha> mha_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(headlab_parallel) {
  using namespace emscripten;
  class_<ParallelLayerJs>("ParallelLayerCore")
      .constructor<const ForwardJs&, double>()
      .function("start", &ParallelLayerJs::start)
      .function("wait", &ParallelLayerJs::wait)
      .function("finishedAddress", &ParallelLayerJs::finished_address)
      .function("finished", &ParallelLayerJs::finished)
      .function("requestStop", &ParallelLayerJs::request_stop)
      .function("exitedAddress", &ParallelLayerJs::exited_address)
      .function("tryJoin", &ParallelLayerJs::try_join)
      .function("threads", &ParallelLayerJs::threads);
}
