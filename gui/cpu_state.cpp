#include "gui/cpu_state.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
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

}  // namespace cs::gui
