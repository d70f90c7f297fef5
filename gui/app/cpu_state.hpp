#pragma once
// Qt's raster paint code (and the offscreen platform plugin) leaves the upper halves of the AVX
// registers dirty, and threads inherit that state from the thread that creates them. libm's FMA paths
// then pay an SSE/AVX transition on every call: measured here, std::log runs 28x slower and one
// simulate() of the 70B demo scenario takes 7 s instead of 0.4 s. Every worker job calls this first;
// it executes VZEROUPPER where the CPU has AVX and does nothing elsewhere.
namespace cs::gui {

void clear_avx_upper_state();

// Worker threads run at a lower scheduling priority than the UI thread (nice +10 on Linux, where a
// thread's nice value is its own), so a busy simulator never starves the event loop on a small machine.
// Also clears the AVX state. Called at the start of every worker job.
void prepare_worker_thread();

}  // namespace cs::gui
