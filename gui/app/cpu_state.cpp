#include "gui/app/cpu_state.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cs::gui {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
__attribute__((target("avx"))) void zero_upper() { _mm256_zeroupper(); }
}  // namespace

void clear_avx_upper_state() {
  if (__builtin_cpu_supports("avx")) zero_upper();
}
#else
void clear_avx_upper_state() {}
#endif

void prepare_worker_thread() {
#if defined(__linux__)
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (getpriority(PRIO_PROCESS, tid) < 10) setpriority(PRIO_PROCESS, tid, 10);
#endif
  clear_avx_upper_state();
}

}  // namespace cs::gui
