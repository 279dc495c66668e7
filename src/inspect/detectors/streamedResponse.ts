/**
 * A handler that answers with a stream: an AI SDK stream response, server-sent events, a ReadableStream body. A request
 * wrapper that stores the response whole would hold such an answer back until the stream ends.
 */
export const STREAMED_RESPONSE =
  /\b(createUIMessageStreamResponse|createDataStreamResponse|to(DataStream|UIMessageStream|TextStream)Response|StreamingTextResponse)\b|['"`]text\/event-stream['"`]|\bnew\s+Response\s*\(\s*(stream|readable)\b/;
