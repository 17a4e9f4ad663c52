/**
 * The RudderStack SDK's 'bundled' build (its plugins inside), re-exported so that its lazy chunk has a name the size
 * budget knows (analytics-sdk.*.js, tests/support/size-budget.ts). Only stores/analytics.ts imports it, lazily.
 */
export { RudderAnalytics } from '@rudderstack/analytics-js/bundled';
