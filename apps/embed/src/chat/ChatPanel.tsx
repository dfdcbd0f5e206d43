import { useRef, useState } from 'react';
import { askQuestion } from '../api.js';
import type { AiAnswer } from '../api.js';
import { KpiChart, TableChart, VegaChart } from '../dashboard/charts.js';
import type { ChartProps } from '../dashboard/charts.js';
import type { Translate } from '../i18n.js';
import type { EmbedSession } from '../session.js';
import type { AiQueryEvent } from '@svc/protocol';
import { describeChatFailure } from './chatFailures.js';
import type { ChatFailure } from './chatFailures.js';


export interface ChatPanelProps {
  session: EmbedSession;
  t: Translate;
  locale: string;
  timezone: string;
  dark: boolean;
  /** The dashboard asked about (the AI widget); else the session's deployment (the chat surface). */
  publicId?: string;
  /** The dashboard agent's id (the AI widget's id). */
  agentId?: string;
  onAiQuery(event: AiQueryEvent): void;
  onError(error: unknown): void;
  compact?: boolean;
}

type Entry = { id: number; question: string } & ({ state: 'asking' } | { state: 'answered'; answer: AiAnswer } | { state: 'failed'; failure: ChatFailure });

const newChatId = () => (typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `chat-${Date.now()}-${Math.random().toString(16).slice(2)}`);

/** A question box and the answers: each a semantic query chosen by the configured model, run by svc, drawn here. */
export function ChatPanel(props: ChatPanelProps) {
  const { session, t, locale, timezone, dark, publicId, agentId } = props;
  const [entries, setEntries] = useState<Entry[]>([]);
  const [draft, setDraft] = useState('');
  const chatId = useRef(newChatId()).current;
  const next = useRef(0);
  const callbacks = useRef(props);
  callbacks.current = props;

  const ask = (question: string) => {
    const id = ++next.current;
    setEntries((previous) => [...previous, { id, question, state: 'asking' }]);
    const base = { query: question, chatId, ...(agentId !== undefined ? { agentId } : {}) };
    callbacks.current.onAiQuery({ ...base, status: 'submitted' });
    askQuestion(session, { question, chatId, timezone, ...(publicId !== undefined ? { publicId } : {}) }).then((answer) => {
      setEntries((previous) => previous.map((e) => (e.id === id ? { id, question, state: 'answered', answer } : e)));
      callbacks.current.onAiQuery({ ...base, status: 'completed' });
    }, (error: unknown) => {
      const failure = describeChatFailure(error, t);
      setEntries((previous) => previous.map((e) => (e.id === id ? { id, question, state: 'failed', failure } : e)));
      callbacks.current.onAiQuery({ ...base, status: 'error' });
      callbacks.current.onError(error);
    });
  };

  return (
    <div className={`chat-panel${props.compact ? ' compact' : ''}`}>
      <ol className="chat-log" aria-live="polite">
        {entries.map((entry) => (
          <li key={entry.id} className="chat-entry" data-state={entry.state}>
            <p className="chat-question">{entry.question}</p>
            {entry.state === 'asking' ? <p className="chat-status" role="status">{t('thinking')}</p> : null}
            {entry.state === 'failed' ? (
              <p className="chat-error" role="alert">
                {entry.failure.text}
                {entry.failure.code !== undefined ? <> <span className="chat-error-code">({t('errorCode', { code: entry.failure.code })})</span></> : null}
              </p>
            ) : null}
            {entry.state === 'answered' ? <Answer answer={entry.answer} locale={locale} dark={dark} /> : null}
          </li>
        ))}
      </ol>
      <form className="chat-form" onSubmit={(event) => {
        event.preventDefault();
        const question = draft.trim();
        if (question === '') return;
        setDraft('');
        ask(question);
      }}>
        <label className="visually-hidden" htmlFor={`ask-${chatId}`}>{t('askTitle')}</label>
        <input id={`ask-${chatId}`} type="text" value={draft} maxLength={2000} placeholder={t('askPlaceholder')} onChange={(event) => setDraft(event.currentTarget.value)} />
        <button type="submit" className="primary">{t('ask')}</button>
      </form>
    </div>
  );
}

/** An answer drawn by its shape: one figure as a KPI, rows over time or by a category as a chart, else a table. */
function Answer({ answer, locale, dark }: { answer: AiAnswer; locale: string; dark: boolean }) {
  const measures = answer.columns.filter((c) => c.kind === 'measure');
  const dimensions = answer.columns.filter((c) => c.kind === 'dimension');
  const kind = answer.rows.length === 1 && dimensions.length === 0 ? 'kpi' : dimensions.length >= 1 && dimensions.length <= 2 && measures.length >= 1 && answer.rows.length <= 200 ? 'vega' : 'table';
  const props: ChartProps = {
    widgetId: answer.chatId, snapshot: { id: 0, reportId: 0, kind }, data: answer, locale, dark,
    onRendered: () => undefined, onDrill: () => undefined, onFailed: () => undefined,
  };
  return (
    <div className="chat-answer" data-kind={kind}>
      {answer.answer ? <p className="chat-text">{answer.answer}</p> : null}
      <div className="chat-result">
        {kind === 'kpi' ? <KpiChart {...props} /> : kind === 'vega' ? <VegaChart {...props} /> : <TableChart {...props} />}
      </div>
    </div>
  );
}
