/**
 * Conversations of `GET|POST /api/chat`: the server keeps the history, the client sends only its
 * next message and the `conversationId` it was given.
 *
 * - The id is 128 random bits: whoever holds it may continue the conversation. When the gateway
 *   needs keys, a conversation also belongs to the key that started it (another key gets 404).
 * - A conversation idle for 24 hours is gone: it is no longer found, and the next new
 *   conversation deletes a bounded batch of expired ones (their messages cascade).
 * - Nothing is written until the model has answered: a failed call leaves no half turn behind.
 * - The model sees the system message (if any) and the last `HISTORY_MESSAGES` messages; at most
 *   `STORED_MESSAGES` are kept, older ones are deleted in the transaction that adds new ones.
 */
import { randomBytes } from 'node:crypto'
import { and, asc, eq, gte, inArray, lt, sql } from 'drizzle-orm'
import type { ChatMessage, ConversationInput } from '../../shared/schemas/chat.js'
import { writeTransaction } from '../db/client.js'
import { chatConversations, chatMessages } from '../db/schema.js'
import type { Services } from '../services.js'
import { GatewayError } from './errors.js'

export const CONVERSATION_IDLE_MS = 24 * 60 * 60 * 1000
/** The latest messages sent to the model with each new one (besides the system message). */
export const HISTORY_MESSAGES = 40
/** The most messages kept per conversation (the system message is always kept). */
export const STORED_MESSAGES = 200
/** Expired conversations deleted when a new one starts. */
const SWEEP_BATCH = 100

type Role = 'system' | 'user' | 'assistant'

export interface Turn {
  id: string
  isNew: boolean
  keyId: number | null
  /** What goes to the model: the kept history, then the new user message. */
  messages: ChatMessage[]
  /** What this turn stores before the answer (a new conversation's system message, and the user's). */
  pending: Array<{ role: Role; content: string }>
  /** The conversation's `nextSeq` as read: the turn is stored only if no other turn came in between. */
  nextSeq: number
}

export interface ConversationStore {
  /** Reads the conversation the input continues (404 when unknown, expired or another key's), or starts one. */
  open(input: ConversationInput, keyId: number | null): Promise<Turn>
  /** Stores the turn's messages and the model's answer, and keeps the conversation alive. */
  record(turn: Turn, answer: string): Promise<void>
}

const notFound = () =>
  new GatewayError(404, 'conversation_not_found', 'No such conversation: it is unknown, expired (24 hours without a message) or was started with another key. Leave conversationId out to start a new one.', 'conversationId')

export function conversationStore(services: Pick<Services, 'db' | 'clock'>): ConversationStore {
  const { db } = services
  const now = () => services.clock().getTime()

  return {
    async open(input, keyId) {
      const user = { role: 'user' as const, content: input.content }
      if (!input.conversationId) {
        const pending = [...(input.system ? [{ role: 'system' as const, content: input.system }] : []), user]
        return { id: randomBytes(16).toString('base64url'), isNew: true, keyId, messages: pending, pending, nextSeq: 0 }
      }
      const [conversation] = await db.select().from(chatConversations).where(eq(chatConversations.id, input.conversationId)).limit(1)
      if (!conversation || conversation.updatedAt <= now() - CONVERSATION_IDLE_MS) throw notFound()
      if (conversation.keyId !== null && conversation.keyId !== keyId) throw notFound()
      const from = Math.max(0, conversation.nextSeq - HISTORY_MESSAGES)
      // The system message (seq 0 when there is one) and the latest messages: two index range reads.
      const rows = await db
        .select({ seq: chatMessages.seq, role: chatMessages.role, content: chatMessages.content })
        .from(chatMessages)
        .where(and(eq(chatMessages.conversationId, conversation.id), sql`(${chatMessages.seq} >= ${from} or (${chatMessages.seq} = 0 and ${chatMessages.role} = 'system'))`))
        .orderBy(asc(chatMessages.seq))
      const history = rows.map(({ role, content }) => ({ role, content }) as ChatMessage)
      return { id: conversation.id, isNew: false, keyId: conversation.keyId, messages: [...history, user], pending: [user], nextSeq: conversation.nextSeq }
    },

    async record(turn, answer) {
      const at = now()
      const rows = [...turn.pending, { role: 'assistant' as const, content: answer }].map((message, index) => ({ conversationId: turn.id, seq: turn.nextSeq + index, ...message }))
      const nextSeq = turn.nextSeq + rows.length
      await writeTransaction(db, async (tx) => {
        if (turn.isNew) {
          const expired = tx.select({ id: chatConversations.id }).from(chatConversations).where(lt(chatConversations.updatedAt, at - CONVERSATION_IDLE_MS)).limit(SWEEP_BATCH)
          await tx.delete(chatConversations).where(inArray(chatConversations.id, expired))
          await tx.insert(chatConversations).values({ id: turn.id, keyId: turn.keyId, createdAt: at, updatedAt: at, nextSeq })
        } else {
          // Two messages sent at once to one conversation: the second to finish is refused rather than interleaved.
          const moved = await tx
            .update(chatConversations)
            .set({ updatedAt: at, nextSeq })
            .where(and(eq(chatConversations.id, turn.id), eq(chatConversations.nextSeq, turn.nextSeq)))
            .returning({ id: chatConversations.id })
          if (moved.length === 0) throw new GatewayError(409, 'conversation_busy', 'Another message of this conversation was answered meanwhile: send yours again (one message at a time per conversation).', 'conversationId')
        }
        await tx.insert(chatMessages).values(rows)
        const keepFrom = nextSeq - STORED_MESSAGES
        if (keepFrom > 1) {
          await tx.delete(chatMessages).where(and(eq(chatMessages.conversationId, turn.id), lt(chatMessages.seq, keepFrom), gte(chatMessages.seq, 1)))
          await tx.delete(chatMessages).where(and(eq(chatMessages.conversationId, turn.id), eq(chatMessages.seq, 0), sql`${chatMessages.role} <> 'system'`))
        }
      })
    },
  }
}
