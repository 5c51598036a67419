import Benchmark
let benchmarks: @Sendable () -> Void = { Benchmark("x") { _ in } }
