/** Longest grace period of a rotation (a key's, a webhook secret's), as the keys tool's longest duration: 100 years. */
export const MAX_GRACE_SECONDS = 36_500 * 86_400;
