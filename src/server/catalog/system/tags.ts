/**
 * What each tag of the OpenAPI document groups: the first segment of a /api/mobile path, or a
 * catalog group (CATALOG_GROUPS). A tag without a line here fails the document's lint test.
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  // /api/mobile
  auth: 'Accounts and sessions: register, log in (with a second factor when two-factor login is on) and out, refresh a token, list and revoke sessions; password reset and email verification by mail; two-factor login (TOTP)',
  user: 'Profiles, and whom a user follows, blocks or mutes; requests to follow a private account; the email address, the password and the account itself',
  posts: 'Posts: the feed, explore, a post with its comments, a user\'s posts, a hashtag\'s posts, saved posts; publish, edit, delete, save',
  interactions: 'Likes, comments and replies',
  comments: "A comment's replies",
  stories: 'Stories that last 24 hours',
  search: 'Search users, posts and hashtags; trending hashtags',
  notifications: 'Notifications: list, count, mark read, and a live stream of them',
  reports: 'Reports to the moderators',
  upload: 'Image and video uploads (`multipart/form-data`, field `file`)',
  push: "Web Push: the server's VAPID key, and the calling session's push subscription (Mastodon's shape)",
  // the catalog's groups
  system: "The server's own: this document, the reference page, uptime, metrics, the catalog's list and statistics, health",
  Tools: 'Running code, video clips',
  Image: 'Content related to an image',
  music: 'Recognising a song',
  'Image Processing': 'Photo effects, expanding and upscaling, background removal, image-to-image',
  Media: 'What a media URL points at',
  AI: 'Chat: the OpenAI-compatible gateway, its aliases and models, answers from the web',
  LLM: 'Language models: a coder, a second upstream, conversations kept on the server, the coding agent',
  NSFW: 'Not offered',
  Audio: 'Speech, in Plaza or from a provider',
  Weather: 'Weather and forecasts',
  Maker: 'Images made from code and text: code snippets, memes, post cards, logos',
  'IMAGE-GENERATORS': 'Images from a prompt',
  Anime: 'Anime versions of images',
}
