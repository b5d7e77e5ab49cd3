// spdlog's compiled part, built once here rather than in every translation unit that includes <spdlog/spdlog.h>
// (header-only, each of them compiled spdlog's logger, registry and formatter again: a file with one log call took
// 17.2 s at -O2 -g, 6.5 s with this compiled part). Debian ships spdlog as headers plus a shared
// libspdlog.so, and a shared object would have to travel beside the binary. So: the headers as Debian ships them,
// SPDLOG_COMPILED_LIB (libpack/CMakeLists.txt), and here the *-inl.h definitions the headers then leave out, with
// the sink templates instantiated for what mpspack's programs and its default logger use (colour sinks on the
// console's mutex).
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

#if SPDLOG_VER_MAJOR != 1 || SPDLOG_VER_MINOR != 10
#error "libpack/src/deps/spdlog.cpp names spdlog 1.10's -inl.h files: check it against this spdlog version"
#endif
#ifndef SPDLOG_COMPILED_LIB
#error "libpack/src/deps/spdlog.cpp is spdlog's compiled part: SPDLOG_COMPILED_LIB must be on"
#endif

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(const std::string&,
                                                                                              color_mode);
template std::shared_ptr<spdlog::logger> spdlog::stdout_color_mt<spdlog::synchronous_factory>(const std::string&,
                                                                                              color_mode);
