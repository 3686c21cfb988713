// Loaded into the crowd row's gateways by the bench (node --expose-gc --require): full garbage
// collections each time the bench sends SIGUSR2, so that the memory it reads next is what the
// process holds, not what is waiting to be collected — several, for what V8 lets go only once it
// has aged through a few (the bytecode of code that ran once, at start-up). Not part of the gateway.
process.on('SIGUSR2', () => {
  for (let collection = 0; collection < 8; collection++) globalThis.gc();
});
