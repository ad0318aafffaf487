// engram-mcp driven by the MCP SDK's own client, as an MCP host (Claude Desktop, an IDE) would drive it: remember,
// stop the server, start it again and recall; then two servers on the same file at once, as two hosts would run them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const db = process.env.ENGRAM_DB ?? 'memories.sqlite3';
// The servers' logs (stderr), shown only if something fails: a host keeps them in its own log.
const logs = [];
process.on('exit', (code) => code !== 0 && process.stderr.write(logs.join('')));

async function connect() {
  const client = new Client({ name: 'engram-example', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: 'npx', args: ['engram-mcp', '--db', db], stderr: 'pipe' });
  transport.stderr.on('data', (chunk) => logs.push(chunk.toString()));
  await client.connect(transport);
  return client;
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
  return result.content.map((part) => part.text);
}

const first = await connect();
const tools = (await first.listTools()).tools.map((tool) => tool.name);
const [remembered] = await call(first, 'remember', { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] });
await first.close(); // the server exits

const second = await connect();
const [context, details] = await call(second, 'recall', { query: process.argv[2] ?? 'which flowers does grandma like?', k: 1 });
const { mode, hits } = JSON.parse(details);
await second.close();

// Two servers on one file: each holds it only for a burst of calls, the other waits its turn.
const [a, b] = await Promise.all([connect(), connect()]);
const notes = ['The dentist appointment is on Tuesday at nine', 'The cabin wifi password is on the fridge'];
const both = await Promise.all([a, b].map((client, i) => call(client, 'remember', { text: notes[i] })));
const recent = await b.readResource({ uri: 'engram://memories/recent' });
await Promise.all([a.close(), b.close()]);

console.log(JSON.stringify({
  tools,
  remembered: JSON.parse(remembered).id,
  context,
  mode,
  explain: hits[0].explain,
  twoServers: { ids: both.map(([text]) => JSON.parse(text).id), recent: JSON.parse(recent.contents[0].text).map((memory) => memory.id) },
}, null, 2));
