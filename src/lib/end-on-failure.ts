/**
 * `body`, whose failure part-way ends the connection it is answered on through `endConnection` (true
 * when there was a connection to end): the client sees an unfinished answer instead of waiting on it. In
 * process, where there is no connection, the failure reaches the reader as an error.
 */
export function endOnFailure(body: ReadableStream<Uint8Array>, endConnection: () => boolean): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        // On a connection: ended there, and the stream just closes (the error, passed on, would
        // reach the server's own stream plumbing, which nobody listens to). In process: an error.
        if (endConnection()) controller.close();
        else controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason).catch(() => {});
    },
  });
}
