/** Result shapes of the structural checks: defined with the other shapes the webviews receive. */
export type {
  CaptureWindow,
  CheckReport,
  CheckResult,
  CheckStatus,
  CheckSuite,
  EvidenceEvent,
  SkipGroup,
  SourceLocation,
} from '../../shared/checks';
