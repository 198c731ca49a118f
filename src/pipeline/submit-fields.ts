import { submitTrack, type SubmitDeps, type SubmitResult } from './submit-track';

/**
 * A submission from inside svc (a source client's tags, a recognised play) goes through the same
 * use case as POST /v1/remoteinput. Its door has checked the source already, so the pipeline's own
 * secret check is not asked again; the server's shutdown waits for it (`trackInFlight`).
 */
export function fieldsSubmitter(
  deps: SubmitDeps,
  nextReceivedSeq: () => Promise<number>,
  trackInFlight: <T>(work: Promise<T>) => Promise<T>,
): (fields: Record<string, string>) => Promise<SubmitResult> {
  const trusted: SubmitDeps = { ...deps, secret: '' };
  return async (fields) => {
    const receivedSeq = await nextReceivedSeq();
    return trackInFlight(submitTrack({ method: 'POST', query: {}, body: fields, authHeader: '' }, receivedSeq, trusted));
  };
}

/** A title the source sent itself (an Ogg tag, an updinfo) holds its channel against recognition (docs/recognition.md). */
export function heardFromSource(
  submit: (fields: Record<string, string>) => Promise<SubmitResult>,
  recognition: { sourceTitled(channel: string): void },
  channelOf: (mount: string) => string,
): (fields: Record<string, string>) => Promise<SubmitResult> {
  return async (fields) => {
    if (fields.channel !== undefined) recognition.sourceTitled(channelOf(fields.channel));
    return submit(fields);
  };
}
