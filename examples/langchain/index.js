// Engram as a LangChain.js retriever: recalled memories fill the prompt of a runnable chain.
// The chat model is LangChain's own fake, so this runs offline; put your real chat model in its place.
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { EngramRetriever } from 'engram/langchain';
import { createEmbedder, createEngine } from 'engram/node';

const engine = await createEngine({ embedder: await createEmbedder() });
await engine.add([
  { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] },
  { text: 'The staging server moved to eu-west-2 in March', project: 'infra' },
]);

const retriever = new EngramRetriever({ memory: engine, searchOptions: { k: 1 } });
const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'Answer from these memories:\n{context}'],
  ['human', '{question}'],
]);
const chain = RunnableSequence.from([
  { context: retriever.pipe((docs) => docs.map((doc) => `- ${doc.pageContent}`).join('\n')), question: new RunnablePassthrough() },
  prompt,
  new FakeListChatModel({ responses: ['Tulips and orchids.'] }),
  new StringOutputParser(),
]);

const question = process.argv[2] ?? 'which flowers does grandma like?';
const prompts = [];
const answer = await chain.invoke(question, { callbacks: [{ handleChatModelStart: (_llm, messages) => prompts.push(...messages) }] });
const docs = await retriever.invoke(question);
console.log(JSON.stringify({ answer, prompt: prompts[0].map((m) => m.content), metadata: docs[0].metadata }, null, 2));
await engine.close();
