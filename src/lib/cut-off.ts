import type http from 'node:http';

/** The node:http request and response each fetch Request is served on (none when called in process). */
const connections = new WeakMap<Request, { req: http.IncomingMessage; res: http.ServerResponse }>();

/** Remembers the connection a request is served on, so that an answer failing mid-body can end it. */
export function rememberConnection(request: Request, context: object): void {
  const { req, res } = context as { req?: http.IncomingMessage; res?: http.ServerResponse };
  if (req && res && typeof res.destroy === 'function') connections.set(request, { req, res });
}

/**
 * Ends the connection of an answer whose body failed after its head was sent (true when it did): the client sees the
 * answer cut off (no final chunk, the connection closed) instead of waiting on it. The request is
 * no longer listened to, so that the closing connection reaches nothing of the abandoned answer.
 */
export function cutOff(request: Request): boolean {
  const connection = connections.get(request);
  if (!connection || connection.res.writableEnded) return false;
  connection.req.removeAllListeners('error');
  connection.req.on('error', () => {});
  connection.res.destroy();
  return true;
}

/** `body`, whose failure part-way ends the connection `request` is answered on (see `cutOff`). */
export function cutOffOnFailure(request: Request, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
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
        if (cutOff(request)) controller.close();
        else controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason).catch(() => {});
    },
  });
}
