/*
 * opprof.hpp - opprof for C++ engines.
 *
 * The C headers compile as C++ (extern "C"), and their recording macros work
 * the same in C++: OPPROF_SCOPE("name") and OPPROF_OP_SCOPE("name") declare a
 * range that ends with the enclosing block, also when an exception leaves it.
 * This header adds owning types for what has a lifetime:
 *
 *   #include <opprof/opprof.hpp>
 *
 *   void Engine::forward(Batch &b) {
 *       OPPROF_SCOPE("forward_%d", b.id);   // same macro as in C
 *       ...
 *   }
 *
 *   struct Request {                         // a range owned by an object
 *       opprof::scope lifetime{OPPROF_SRCLOC("request", OPPROF_KIND_USER_ANNOTATION)};
 *   };
 *
 *   opprof::session s(cfg);                  // throws opprof::error on failure
 *   ...
 *   s.step();
 *   opprof::capture_ptr cap = s.take_capture();   // or on_trace_ready
 *
 * Everything here is inline; link with -lopprof as for C.
 */
#ifndef OPPROF_OPPROF_HPP
#define OPPROF_OPPROF_HPP

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <memory>
#include <stdexcept>
#include <utility>

namespace opprof {

/** An opprof error code as an exception (what() is opprof_strerror). */
class error : public std::runtime_error {
public:
    OPPROF__NOINSTR explicit error(int code) : std::runtime_error(opprof_strerror(code)), code_(code) {}
    OPPROF__NOINSTR int code() const noexcept { return code_; }

private:
    int code_;
};

/** A range from construction to destruction (or end()). Movable, not
 *  copyable; like every range, it must end on the thread that began it,
 *  innermost first. With OPPROF_ENABLE=0 it records nothing. */
class scope {
public:
    OPPROF__NOINSTR explicit scope(const opprof_srcloc *loc) noexcept
#if OPPROF_ENABLE
        : range_(OPPROF__RECORDING() ? opprof__range_begin(loc) : 0)
#endif
    {
        (void)loc;
    }
    OPPROF__NOINSTR scope(scope &&other) noexcept : range_(std::exchange(other.range_, 0)) {}
    OPPROF__NOINSTR scope &operator=(scope &&other) noexcept {
        if (this != &other) {
            end();
            range_ = std::exchange(other.range_, 0);
        }
        return *this;
    }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
    OPPROF__NOINSTR ~scope() { end(); }

    /** End the range now (the destructor then does nothing). */
    OPPROF__NOINSTR void end() noexcept {
        if (range_) opprof__range_end(std::exchange(range_, 0));
    }
    /** False when nothing is being recorded (no window, or compiled out). */
    OPPROF__NOINSTR explicit operator bool() const noexcept { return range_ != 0; }

private:
    opprof_range range_ = 0;
};

struct capture_deleter {
    OPPROF__NOINSTR void operator()(opprof_capture *c) const noexcept { opprof_capture_free(c); }
};
/** An owned capture (opprof_capture_free at destruction). */
using capture_ptr = std::unique_ptr<opprof_capture, capture_deleter>;

/** A profiler session: started by the constructor, freed (stopped, a
 *  capture in progress saved) by the destructor. */
class session {
public:
    OPPROF__NOINSTR explicit session(const opprof_config &config) {
        int rc = opprof_session_start(&s_, &config);
        if (rc) throw error(rc);
    }
    session(const session &) = delete;
    session &operator=(const session &) = delete;
    OPPROF__NOINSTR ~session() { opprof_session_free(s_); }

    /** opprof_session_step; a failure is returned, as a code, not thrown
     *  (a lost capture must not end the user's loop). */
    OPPROF__NOINSTR int step() noexcept { return opprof_session_step(s_); }
    OPPROF__NOINSTR int stop() noexcept { return opprof_session_stop(s_); }
    /** The oldest capture kept by a session without on_trace_ready, or an
     *  empty pointer when none is waiting. */
    OPPROF__NOINSTR capture_ptr take_capture() noexcept {
        opprof_capture *c = nullptr;
        return opprof_session_take_capture(s_, &c) == 0 ? capture_ptr(c) : capture_ptr();
    }
    OPPROF__NOINSTR opprof_session *get() const noexcept { return s_; }

private:
    opprof_session *s_ = nullptr;
};

} // namespace opprof

#endif /* OPPROF_OPPROF_HPP */
