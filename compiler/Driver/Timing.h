//===- Timing.h - wall-clock intervals of the driver's steps ----*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_TIMING_H
#define KILN_COMPILER_DRIVER_TIMING_H

#include <chrono>

namespace kiln::driver {

/// Milliseconds from `start` to now (steady clock).
inline double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_TIMING_H
