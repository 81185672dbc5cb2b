import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Postgres 15, Redis 7 and s3rver on loopback for the whole run (installed when missing);
    // their URLs reach the tests as TEST_POSTGRES_URL, TEST_REDIS_URL, TEST_S3_ENDPOINT, ….
    globalSetup: ["test/support/servers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report gives CI its closing "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]]
  }
})
