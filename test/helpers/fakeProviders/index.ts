export { COHERE_TEST_KEY, cohereFakeVector, startFakeCohere, type FakeCohereOptions } from './cohere';
export { OPENAI_TEST_KEY, startFakeOpenAi, type FakeOpenAiOptions } from './openai';
export {
  fakeVector,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
  type Reply,
  type Scripted,
} from './server';
export {
  TINY_DIMENSIONS,
  TINY_VOCAB,
  tinyTokenVector,
  writeTinyOnnxModel,
  type TinyModelOptions,
} from './tinyOnnxModel';
