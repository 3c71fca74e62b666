// run_ort.js MODEL RUNS PREFIX THREADS - MODEL run RUNS times by ONNX Runtime
// (onnxruntime-node) with profiling on (SessionOptions.enableProfiling): the
// profile ORT writes is PREFIX_<date>.json.
const ort = require('onnxruntime-node');
(async () => {
  const [model, runs, prefix, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    enableProfiling: true, profileFilePrefix: prefix, executionProviders: ['cpu'],
    intraOpNumThreads: +threads, interOpNumThreads: 1});
  const input = session.inputNames[0];
  const dims = model.endsWith('mlp.onnx') ? [128, 256] : [8, 3, 32, 32];
  const n = dims.reduce((a, b) => a * b);
  const x = new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => (i % 7) / 7), dims);
  for (let i = 0; i < +runs; i++) await session.run({[input]: x});
  session.endProfiling();
  await session.release();
})().catch((e) => { console.error(`run_ort: ${e.message}`); process.exit(1); });
