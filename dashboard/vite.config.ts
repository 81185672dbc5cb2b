import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

/**
 * The web dashboard: Preact through esbuild's automatic JSX runtime (no framework plugin),
 * built into dist/dashboard, which the gateway serves on DASHBOARD_PORT next to a config.json
 * naming the API's port. Relative paths (base "./") so it works under any prefix.
 *
 * In development (`npx vite --config dashboard/vite.config.ts`) the page calls the API on port
 * 2785 directly (the API answers cross-origin requests). `/api` is also proxied to the API
 * (API_PORT, default 2785): start Vite with VITE_API_SAME_ORIGIN=1 to use the proxy instead.
 */
const root = fileURLToPath(new URL(".", import.meta.url))
const apiPort = Number(process.env["API_PORT"] ?? 2785)

export default defineConfig({
  root,
  base: "./",
  publicDir: false,
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../dist/dashboard",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    modulePreload: { polyfill: false }
  },
  server: {
    port: 5173,
    strictPort: false,
    proxy: { "/api": { target: `http://127.0.0.1:${apiPort}`, changeOrigin: true } }
  }
})
