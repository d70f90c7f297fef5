# Warnings and sanitizers applied to every clustersim target through clustersim_options.
add_library(clustersim_options INTERFACE)
target_compile_options(clustersim_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(CLUSTERSIM_SANITIZE)
  # -O1, as AddressSanitizer's documentation advises ("to get a reasonable performance add -O1 or higher"): the
  # sanitizer build is Debug (-O0) otherwise, and its test run was CI's longest step. -O1 keeps frame pointers
  # (asked below) and inlines little, so reports keep their stacks.
  target_compile_options(clustersim_options INTERFACE -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(clustersim_options INTERFACE -fsanitize=address,undefined)
endif()
if(CLUSTERSIM_FUZZ)
  # Coverage for libFuzzer in every library; the harnesses add libFuzzer's main (tests/fuzz).
  target_compile_options(clustersim_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(clustersim_options INTERFACE -fsanitize=address,undefined)
endif()
option(CLUSTERSIM_WERROR "Treat compiler warnings as errors (CI builds with it)" OFF)
if(CLUSTERSIM_WERROR)
  target_compile_options(clustersim_options INTERFACE -Werror)
endif()
