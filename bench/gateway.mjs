// The gateway as a child process for the benchmark: `node dist/main.js` with PORT=0. It always
// prints `Switchboard <version> Listening on http://…` on stdout, whatever LOG_LEVEL says, and
// that line is the only way to learn the port it bound.
import { spawn } from "node:child_process"
import * as fs from "node:fs"

const LISTENING = /Listening on (http:\/\/\S+)/
const KEPT_OUTPUT = 20_000 // characters of output kept in memory (the log file has all of it)

/**
 * Starts the gateway and resolves once it printed its Listening line; rejects after `timeoutMs`
 * or if it exits first, with its output in the message.
 */
export const startGateway = async ({ mainJs, cwd, env, logFile, timeoutMs = 20_000 }) => {
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} does not exist; run \`npm run build\` first`)
  const child = spawn(process.execPath, [mainJs], { cwd, env: { DASHBOARD_PORT: "0", ...env, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] })
  const log = fs.createWriteStream(logFile)
  let output = ""
  const capture = (chunk) => {
    log.write(chunk)
    output = (output + chunk.toString("utf8")).slice(-KEPT_OUTPUT)
  }
  child.stdout.on("data", capture)
  child.stderr.on("data", capture)
  const exited = new Promise((resolve) => {
    child.once("close", (code, signal) => log.end(() => resolve({ code, signal })))
  })

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000) // shows up as signal SIGKILL
    const exit = await exited
    clearTimeout(timer)
    return exit
  }

  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`did not print its Listening line within ${timeoutMs / 1000} s`)), timeoutMs)
      const onData = () => {
        const match = LISTENING.exec(output)
        if (!match) return
        clearTimeout(timer)
        child.stdout.off("data", onData)
        resolve(match[1].replace(/\/+$/, ""))
      }
      child.stdout.on("data", onData)
      child.once("error", reject)
      exited.then(({ code, signal }) => reject(new Error(`exited during start-up (code ${code}, signal ${signal})`)))
    })
    return { url, pid: child.pid, stop, output: () => output, cpuSeconds: () => cpuSeconds(child.pid), rssKb: () => rssKb(child.pid) }
  } catch (error) {
    await stop()
    throw new Error(`gateway ${error.message}; its output:\n${output || "(none)"}`)
  }
}

/** CPU seconds (user + system) used so far, from /proc/<pid>/stat (Linux, USER_HZ = 100). */
const cpuSeconds = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/** Resident set size in kB, from /proc/<pid>/status (Linux). */
const rssKb = (pid) => {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}
