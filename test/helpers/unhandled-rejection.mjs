// Loaded into a server process by a test (NODE_OPTIONS=--import): once the server has had time to
// start, a promise is rejected with nobody to handle it, as a defect in the code would.
setTimeout(() => {
  Promise.reject(new Error('a rejection nobody handles'));
}, 3000);
