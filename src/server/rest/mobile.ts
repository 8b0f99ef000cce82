/**
 * The social REST API of spec/social-api.md, mounted at /api/mobile. The one place that lists its paths:
 * each row reads like the spec's endpoint table, then names the procedure that serves it.
 */
import { z } from 'zod'
import * as push from '../../shared/schemas/push.js'
import * as data from '../../shared/schemas/responses.js'
import * as security from '../../shared/schemas/security.js'
import { FORGOT_MESSAGE } from '../domain/recovery.js'
import { accountPage, LINK_PAGE_ERRORS } from './account-pages.js'
import type { Route } from './adapter.js'
import { POOL_ERRORS } from '../workers/pool.js'
import { handleNotificationStream, NOTIFICATION_STREAM_ERRORS, notificationStreamInput } from './notification-stream.js'
import { handleUpload } from './uploads.js'

export const mobileRoutes: Route[] = [
  // auth
  { method: 'POST', path: '/auth/register', procedure: 'auth.register', status: 201, message: 'Registration successful', summary: 'Create an account and log in', output: data.session },
  { method: 'POST', path: '/auth/login', procedure: 'auth.login', message: 'Login successful', summary: 'Log in with email (or username) and password (a two-factor challenge when it is on)', output: security.loginResult },
  { method: 'POST', path: '/auth/login/2fa', procedure: 'auth.loginTwoFactor', message: 'Login successful', summary: "A login's second step: the challenge and a code (or a recovery code) give the session", output: data.session },
  { method: 'POST', path: '/auth/logout', procedure: 'auth.logout', input: () => undefined, message: 'Logged out', summary: 'End the calling session', output: data.nothing },
  { method: 'POST', path: '/auth/refresh', procedure: 'auth.refresh', input: () => undefined, message: 'Token refreshed', summary: 'Swap the calling session for a fresh token', output: data.session },
  { method: 'GET', path: '/auth/sessions', procedure: 'auth.sessions', input: () => undefined, summary: "List the caller's live sessions", output: data.sessionList },
  { method: 'DELETE', path: '/auth/sessions/:id', procedure: 'auth.revokeSession', input: ({ params }) => params, message: 'Session revoked', summary: "Revoke one of the caller's sessions", output: data.nothing },

  // password reset and email verification by mail (issue 48); the GETs are the pages the mailed links open
  { method: 'POST', path: '/auth/password/forgot', procedure: 'auth.forgotPassword', input: ({ body }) => body, message: FORGOT_MESSAGE, summary: 'Mail a password reset link to the account with this email (or username)', output: data.nothing },
  { method: 'GET', path: '/auth/password/reset', handle: accountPage('password_reset'), request: z.object({ token: z.string() }), answers: 'page', errors: LINK_PAGE_ERRORS, summary: 'The page a reset link opens: a form for the new password' },
  { method: 'POST', path: '/auth/password/reset', procedure: 'auth.resetPassword', input: ({ body }) => body, message: 'Password reset: log in with the new password', summary: 'Set a new password with a mailed token; every session is revoked', output: security.passwordReset },
  { method: 'GET', path: '/auth/email/verify', handle: accountPage('verify_email'), request: z.object({ token: z.string() }), answers: 'page', errors: LINK_PAGE_ERRORS, summary: 'The page a verification link opens' },
  { method: 'POST', path: '/auth/email/verify', procedure: 'auth.verifyEmail', input: ({ body }) => body, message: 'Email address verified', summary: 'Verify an email address with a mailed token', output: security.emailState },
  { method: 'POST', path: '/auth/email/resend', procedure: 'auth.resendVerification', input: () => undefined, message: 'A new verification link has been mailed', summary: "Mail a new verification link for the caller's unverified or pending address", output: data.nothing },

  // two-factor login (TOTP, issue 48)
  { method: 'GET', path: '/auth/2fa', procedure: 'twoFactor.status', input: () => undefined, summary: "Whether the caller's two-factor login is on, and recovery codes left", output: security.twoFactorStatus },
  { method: 'POST', path: '/auth/2fa/setup', procedure: 'twoFactor.setup', input: ({ body }) => body, message: 'Scan the QR code, then confirm with the first code', summary: 'Start two-factor login: a secret, its otpauth:// URI and QR code', output: security.twoFactorSetup },
  { method: 'POST', path: '/auth/2fa/confirm', procedure: 'twoFactor.confirm', input: ({ body }) => body, message: 'Two-factor login is on: keep these recovery codes somewhere safe', summary: "Turn two-factor login on with the app's first code; answers ten recovery codes", output: security.recoveryCodes },
  { method: 'POST', path: '/auth/2fa/disable', procedure: 'twoFactor.disable', input: ({ body }) => body, message: 'Two-factor login is off', summary: 'Turn two-factor login off (password and a code)', output: security.twoFactorStatus },
  { method: 'POST', path: '/auth/2fa/recovery_codes', procedure: 'twoFactor.recoveryCodes', input: ({ body }) => body, message: 'New recovery codes: the old ones no longer work', summary: 'Replace the recovery codes (password and a code)', output: security.recoveryCodes },

  // users
  { method: 'GET', path: '/user/profile/:user_id?', procedure: 'users.profile', input: ({ params }) => params, summary: "A user's profile (the caller's own without user_id)", output: data.userProfile },
  { method: 'PUT', path: '/user/update', procedure: 'users.update', input: ({ body }) => body, message: 'Profile updated', summary: "Change the caller's full name, bio, avatar or privacy", output: data.userProfile },
  { method: 'POST', path: '/user/follow/:user_id', procedure: 'users.follow', input: ({ params }) => params, message: (profile: { follow_requested: boolean }) => (profile.follow_requested ? 'Follow requested' : 'Followed'), summary: 'Follow a user (a private account: ask to)', output: data.userProfile },
  { method: 'DELETE', path: '/user/unfollow/:user_id', procedure: 'users.unfollow', input: ({ params }) => params, message: 'Unfollowed', summary: 'Stop following a user', output: data.userProfile },
  { method: 'GET', path: '/user/followers/:user_id', procedure: 'users.followers', summary: "A page of a user's followers", output: data.userPage },
  { method: 'GET', path: '/user/following/:user_id', procedure: 'users.following', summary: 'A page of the users a user follows', output: data.userPage },
  { method: 'GET', path: '/user/follow-requests', procedure: 'users.followRequests', input: ({ query }) => query, summary: "A page of the requests to follow the caller's private account, newest first", output: data.userPage },
  { method: 'POST', path: '/user/follow-requests/:user_id/approve', procedure: 'users.approveFollowRequest', input: ({ params }) => params, message: 'Follow request approved', summary: 'Approve a request to follow the caller (the requester now follows them)', output: data.followRequestResult },
  { method: 'POST', path: '/user/follow-requests/:user_id/deny', procedure: 'users.denyFollowRequest', input: ({ params }) => params, message: 'Follow request denied', summary: 'Deny a request to follow the caller', output: data.followRequestResult },
  { method: 'POST', path: '/user/block/:user_id', procedure: 'users.block', input: ({ params }) => params, message: 'Blocked', summary: 'Block a user', output: data.blockState },
  { method: 'DELETE', path: '/user/unblock/:user_id', procedure: 'users.unblock', input: ({ params }) => params, message: 'Unblocked', summary: 'Unblock a user', output: data.blockState },
  { method: 'GET', path: '/user/blocked', procedure: 'users.blocked', input: ({ query }) => query, summary: 'A page of the users the caller blocks', output: data.userPage },
  { method: 'POST', path: '/user/mute/:user_id', procedure: 'users.mute', input: ({ params }) => params, message: 'Muted', summary: 'Mute a user', output: data.muteState },
  { method: 'DELETE', path: '/user/unmute/:user_id', procedure: 'users.unmute', input: ({ params }) => params, message: 'Unmuted', summary: 'Unmute a user', output: data.muteState },
  { method: 'GET', path: '/user/muted', procedure: 'users.muted', input: ({ query }) => query, summary: 'A page of the users the caller mutes', output: data.userPage },
  { method: 'GET', path: '/user/email', procedure: 'users.email', input: () => undefined, summary: "The caller's email address, whether it is verified, and a pending new one", output: security.emailState },
  { method: 'PUT', path: '/user/email', procedure: 'users.changeEmail', input: ({ body }) => body, message: 'Email updated', summary: 'Change the email address (pending until the link mailed to it is opened, when mail is set up)', output: security.emailState },
  { method: 'PUT', path: '/user/password', procedure: 'users.changePassword', input: ({ body }) => body, message: 'Password changed', summary: 'Change the password; other sessions are revoked', output: data.passwordChanged },
  { method: 'DELETE', path: '/user/account', procedure: 'users.deleteAccount', input: ({ body }) => body, deleteWithBody: true, message: 'Account deleted', summary: "Delete the caller's account and everything it made", output: data.nothing },

  // posts
  { method: 'GET', path: '/posts/feed', procedure: 'posts.feed', input: ({ query }) => query, summary: "Posts of followed users and the caller's own, newest first", output: data.postPage },
  { method: 'GET', path: '/posts/explore', procedure: 'posts.explore', input: ({ query }) => query, summary: 'Popular public posts', output: data.postPage },
  { method: 'GET', path: '/posts/detail/:post_id', procedure: 'posts.detail', summary: 'A post and a page of its top-level comments, each with its first replies', output: data.postDetail },
  { method: 'POST', path: '/posts/create', procedure: 'posts.create', input: ({ body }) => body, status: 201, message: 'Post created', summary: 'Publish a post', output: data.post },
  { method: 'GET', path: '/posts/user/:user_id', procedure: 'posts.byUser', summary: "A page of a user's posts", output: data.postPage },
  { method: 'GET', path: '/posts/hashtag/:tag', procedure: 'posts.hashtag', summary: "A hashtag's public posts, newest first", output: data.hashtagPage },
  { method: 'GET', path: '/posts/bookmarks', procedure: 'posts.bookmarks', input: ({ query }) => query, summary: "The caller's saved posts, newest saved first", output: data.postPage },
  { method: 'DELETE', path: '/posts/:post_id', procedure: 'posts.delete', input: ({ params }) => params, message: 'Post deleted', summary: "Delete one of the caller's posts", output: data.nothing },
  { method: 'PUT', path: '/posts/:post_id', procedure: 'posts.edit', input: ({ body, params }) => ({ ...body, ...params }), message: 'Post updated', summary: "Edit the text, visibility or alt text of one of the caller's posts", output: data.post },
  { method: 'POST', path: '/posts/:post_id/bookmark', procedure: 'posts.bookmark', input: ({ params }) => params, message: 'Post saved', summary: 'Save a post to look at later', output: data.bookmarkState },
  { method: 'DELETE', path: '/posts/:post_id/bookmark', procedure: 'posts.unbookmark', input: ({ params }) => params, message: 'Post unsaved', summary: 'Take a post out of the saved ones', output: data.bookmarkState },

  // interactions
  { method: 'POST', path: '/interactions/like/:post_id', procedure: 'interactions.like', input: ({ params }) => params, message: 'Post liked', summary: 'Like a post', output: data.likeState },
  { method: 'DELETE', path: '/interactions/unlike/:post_id', procedure: 'interactions.unlike', input: ({ params }) => params, message: 'Post unliked', summary: 'Take back a like', output: data.likeState },
  { method: 'POST', path: '/interactions/comment/:post_id', procedure: 'interactions.comment', input: ({ body, params }) => ({ ...body, ...params }), status: 201, message: (comment: { parent_id: number | null }) => (comment.parent_id === null ? 'Comment added' : 'Reply added'), summary: 'Comment on a post, or reply to one of its comments (parent_id)', output: data.comment },
  { method: 'DELETE', path: '/interactions/comment/:comment_id', procedure: 'interactions.deleteComment', input: ({ params }) => params, message: 'Comment deleted', summary: "Delete a comment and its replies (the caller's own, or on the caller's post)", output: data.nothing },
  { method: 'GET', path: '/comments/:comment_id/replies', procedure: 'interactions.replies', summary: "A page of a comment's replies, oldest first", output: data.replyPage },

  // stories
  { method: 'GET', path: '/stories/feed', procedure: 'stories.feed', input: () => undefined, summary: 'Active stories of the caller and followed users, grouped by user', output: data.storyFeed },
  { method: 'GET', path: '/stories/view/:story_id', procedure: 'stories.view', input: ({ params }) => params, summary: 'Open a story (records a view and notifies its author)', output: data.story },
  { method: 'POST', path: '/stories/create', procedure: 'stories.create', input: ({ body }) => body, status: 201, message: 'Story created', summary: 'Publish a story for 24 hours', output: data.story },
  { method: 'DELETE', path: '/stories/:story_id', procedure: 'stories.delete', input: ({ params }) => params, message: 'Story deleted', summary: "Delete one of the caller's stories", output: data.nothing },

  // search (GET /search/posts is an extra path; the others are the spec's)
  { method: 'GET', path: '/search/all', procedure: 'search.all', input: ({ query }) => query, summary: 'Search users, posts and hashtags', output: data.searchResults },
  { method: 'GET', path: '/search/users', procedure: 'search.users', input: ({ query }) => query, summary: 'Search users', output: data.userSearch },
  { method: 'GET', path: '/search/hashtags', procedure: 'search.hashtags', input: ({ query }) => query, summary: 'Search hashtags', output: data.hashtagSearch },
  { method: 'GET', path: '/search/posts', procedure: 'search.posts', input: ({ query }) => query, summary: 'Search public posts', output: data.postSearch },
  { method: 'GET', path: '/search/trending', procedure: 'search.trending', input: ({ query }) => query, summary: 'Hashtags trending now: recent distinct authors, the newer the more each counts', output: data.trending },

  // notifications
  { method: 'GET', path: '/notifications/list', procedure: 'notifications.list', input: ({ query }) => query, summary: "A page of the caller's notifications, newest first", output: data.notificationPage },
  { method: 'GET', path: '/notifications/count', procedure: 'notifications.count', input: () => undefined, summary: "How many of the caller's notifications are unread", output: data.unreadCount },
  { method: 'PUT', path: '/notifications/mark_read/:notification_id?', procedure: 'notifications.markRead', input: ({ params }) => params, summary: 'Mark one notification read, or all without an id', output: data.markedRead },
  // Server-Sent Events: notifications as they arrive (Last-Event-ID resumes)
  { method: 'GET', path: '/notifications/stream', handle: handleNotificationStream, auth: 'bearer', answers: 'event-stream', request: notificationStreamInput, errors: NOTIFICATION_STREAM_ERRORS, summary: 'Notifications as Server-Sent Events as they arrive (Last-Event-ID or last_event_id resumes)' },

  // Web Push (issue 48; Mastodon's /api/v1/push/subscription shape): one subscription per session
  { method: 'GET', path: '/push/vapid-key', procedure: 'push.vapidKey', input: () => undefined, summary: "The server's VAPID public key, for PushManager.subscribe", output: push.vapidKey },
  { method: 'GET', path: '/push/subscription', procedure: 'push.subscription', input: () => undefined, summary: "The calling session's push subscription", output: push.pushSubscription },
  { method: 'POST', path: '/push/subscription', procedure: 'push.subscribe', input: ({ body }) => body, message: 'Subscribed', summary: 'Subscribe the calling session to Web Push (replaces its subscription)', output: push.pushSubscription },
  { method: 'PUT', path: '/push/subscription', procedure: 'push.update', input: ({ body }) => body, message: 'Subscription updated', summary: "Change which notifications the session's subscription pushes", output: push.pushSubscription },
  { method: 'DELETE', path: '/push/subscription', procedure: 'push.unsubscribe', input: () => undefined, message: 'Unsubscribed', summary: "Remove the calling session's push subscription", output: data.nothing },

  // reports (issue 13; not in the spec)
  { method: 'POST', path: '/reports', procedure: 'reports.create', input: ({ body }) => body, status: 201, message: 'Report submitted', summary: 'Report a post, comment, story or user to the moderators', output: data.reportCreated },

  // uploads: multipart with the file in field `file` (POST /upload/comment is an extra path)
  { method: 'POST', path: '/upload/avatar', handle: handleUpload('avatars'), auth: 'bearer', multipart: 'file', errors: POOL_ERRORS, status: 201, summary: "Upload an image and make it the caller's avatar", output: data.uploadResult },
  { method: 'POST', path: '/upload/post', handle: handleUpload('posts'), auth: 'bearer', multipart: 'file', errors: POOL_ERRORS, status: 201, summary: 'Upload an image or video for a post (a carousel takes up to 10)', output: data.uploadResult },
  { method: 'POST', path: '/upload/story', handle: handleUpload('stories'), auth: 'bearer', multipart: 'file', errors: POOL_ERRORS, status: 201, summary: 'Upload an image or video for a story', output: data.uploadResult },
  { method: 'POST', path: '/upload/comment', handle: handleUpload('comments'), auth: 'bearer', multipart: 'file', errors: POOL_ERRORS, status: 201, summary: 'Upload an image for a comment', output: data.uploadResult },
]
