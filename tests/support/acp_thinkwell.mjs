// A real, independent conductor of ACP proxy chains: @thinkwell/conductor (TypeScript, the protocol's
// earlier form), run on this process's stdio as an editor would run a conductor:
//   node acp_thinkwell.mjs MODULE_DIR "PROXY CMD" ... "AGENT CMD"
// MODULE_DIR is the folder whose node_modules holds @thinkwell/conductor.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [moduleDir, ...commands] = process.argv.slice(2);
const entry = path.join(moduleDir, "node_modules", "@thinkwell", "conductor", "dist", "index.js");
const { Conductor, fromCommands } = await import(pathToFileURL(entry).href);

const stdio = {
  async connect() {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    return {
      send(message) {
        process.stdout.write(JSON.stringify(message) + "\n");
      },
      get messages() {
        return (async function* () {
          for await (const line of lines) if (line.trim()) yield JSON.parse(line);
        })();
      },
      async close() {
        lines.close();
      },
    };
  },
};

const conductor = new Conductor({ instantiator: fromCommands(commands), mcpBridgeMode: "disabled" });
await conductor.connect(stdio);
await conductor.shutdown();
process.exit(0);
