import type { ReportFormat, ReportFormatName } from '../format';
import { bmi } from './bmi';
import { nprPlaylist } from './npr-playlist';
import { nprStreams } from './npr-streams';
import { ppl } from './ppl';
import { prs } from './prs';
import { soundexchange } from './soundexchange';

/** Every report file svc writes, by the name the CLI and the HTTP path use. */
export const FORMATS: Readonly<Record<ReportFormatName, ReportFormat>> = {
  soundexchange,
  'npr-playlist': nprPlaylist,
  'npr-streams': nprStreams,
  ppl,
  prs,
  bmi,
};
