import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report gives CI its closing "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]]
  }
})
