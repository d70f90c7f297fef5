#pragma once
// An allocator for the large arrays an event loop reads at random: 10^7 collective instances, 10^4 ranks'
// state, the max-min solver's flows and path pool. At 16,384 simulated ranks those span hundreds of MiB,
// and with 4 KiB pages nearly every read that misses the cache also misses the TLB (a page walk on top of
// the miss). An array of 2 MiB or more is placed on 2 MiB boundaries and advised MADV_HUGEPAGE, so the
// kernel backs it with transparent huge pages where it offers them on request ("madvise" mode, the
// Debian and Ubuntu default; "always" does it anyway, "never" ignores the advice and nothing changes).
// On its own (the library's case: the GUI, the Python module) this gave part of the gain below, too
// little to separate from this machine's noise. Smaller arrays go to std::allocator as before. Only placement changes: contents and order do not, so the
// simulation's output is the same with or without the advice.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__GLIBC__)
#include <climits>
#include <malloc.h>
#endif

namespace cs {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding, as std::allocator

  static bool huge(std::size_t n) { return n >= kHugePage / sizeof(T); }

  T* allocate(std::size_t n) {
    if (!huge(n)) return std::allocator<T>{}.allocate(n);
    if (n > static_cast<std::size_t>(-1) / 2 / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, bytes);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a refusal leaves 4 KiB pages, nothing else
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (!huge(n)) {
      std::allocator<T>{}.deallocate(p, n);
      return;
    }
    std::free(p);
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// A std::vector whose storage, once 2 MiB or more, is on huge pages (above).
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

// The rest of the heap (10^5 small vectors: a collective's phases, the kernel queue's buckets, the
// template's task lists) cannot be placed from here: glibc's malloc advises huge pages for its own heap and
// mmapped chunks only when GLIBC_TUNABLES holds glibc.malloc.hugetlb=1 at start-up (glibc 2.35 and later,
// "Memory Allocation Tunables" in its manual; the variable is read once, before main). A command-line
// program calls this first thing in main: where the kernel gives huge pages on request (mode "madvise") and
// the variable does not already say, the program runs itself again, the same arguments and environment,
// with the switch added. Measured on the 405B / 16,384-GPU unmirrored flow run (bench/README.md, runs one
// after the other): 14.4 -> 12.1-12.9 s user at a quiet hour (CLUSTERSIM_HUGE_PAGES=0 against the
// restart); this and the arrays above together, 17.8-20.0 -> 14.8-15.2 s on a busy machine. The output is
// byte-identical (only where memory sits changes).
// Not done: CLUSTERSIM_HUGE_PAGES=0; under valgrind (its preload in LD_PRELOAD: an exec would leave the
// tool) or a sanitizer (its own allocator); without /proc (the exec fails, and the program simply carries
// on). The variable is set before the exec, so a program never restarts twice.
//
// Also, and first (in the restarted program too): malloc keeps what is freed instead of handing it back
// to the kernel. glibc trims the top of its heap above 128 KiB free and serves blocks from 128 KiB up
// (its threshold rising with the blocks freed, up to 32 MiB) by mmap, unmapped on free; a step's vectors
// grow, shrink and move (the solver's path pool is repacked whenever its dead paths outweigh the live
// ones), and every page so returned is zeroed by the kernel again when it comes back. On the 405B /
// 16,384-GPU unmirrored flow run that was 2,511 huge-page faults (5 GiB zeroed, /proc/vmstat
// thp_fault_alloc) for a peak of 0.3 GiB, 0.7 s of system time; with both thresholds at their maximum,
// 147 faults (the peak itself) and 0.06 s. The peak resident size is the same (308 -> 313 MiB).
inline void restart_with_huge_page_malloc(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  ::mallopt(M_TRIM_THRESHOLD, INT_MAX);           // never trim the heap's top
  ::mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // glibc's largest: only bigger blocks are mmapped
#endif
#if defined(__linux__) && defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
  const char* opt = std::getenv("CLUSTERSIM_HUGE_PAGES");
  if (opt != nullptr && std::strcmp(opt, "0") == 0) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) return;
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(mode_file, mode) || mode.find("[madvise]") == std::string::npos) return;
  const std::string value = tunables != nullptr && *tunables != '\0' ? std::string(tunables) + ":glibc.malloc.hugetlb=1"
                                                                     : std::string("glibc.malloc.hugetlb=1");
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);  // returns only on failure: carry on without
#else
  (void)argv;
#endif
}

}  // namespace cs
