/**
 * A scripted OpenAI-compatible endpoint for the demo's tests: a tiny node:http server on 127.0.0.1 that answers
 * `/v1/chat/completions` (with CORS, as a local Ollama or LM Studio would) with the text and `usage` that `answer`
 * chooses from the prompt it received. It stands in for a language model, which cannot run on this machine.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model?: string;
  messages: { role: string; content: string }[];
  max_tokens?: number;
}

export interface ScriptedAnswer {
  text: string;
  usage: { prompt_tokens: number; completion_tokens: number };
}

export interface ScriptedEndpoint {
  server: Server;
  /** The base URL to type in the demo's picker. */
  url: string;
  /** Every chat request received, in order. */
  requests: ChatRequest[];
  /** CORS preflights received. */
  readonly preflights: number;
  close(): Promise<void>;
}

export async function startScriptedEndpoint(answer: (prompt: string) => ScriptedAnswer): Promise<ScriptedEndpoint> {
  const state = { requests: [] as ChatRequest[], preflights: 0 };
  const cors = { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type' };
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => resolve(body));
      req.on('error', reject);
    });
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      state.preflights++;
      res.writeHead(204, cors).end();
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, cors).end();
      return;
    }
    void readBody(req).then((body) => {
      const request = JSON.parse(body) as ChatRequest;
      state.requests.push(request);
      const { text, usage } = answer(request.messages[0]?.content ?? '');
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'scripted', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    get preflights() {
      return state.preflights;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
