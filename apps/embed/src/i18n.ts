/**
 * The embed's own words in a few languages (SPEC set-locale: "Switch UI language"; full, short and regional codes).
 * A locale picks its language's catalogue (`pt-BR` -> `pt`, `de` -> `de`); unknown languages read English, while
 * dates and numbers still follow the full locale through Intl.
 */
const en = {
  loading: 'Loading…',
  updated: 'Updated {time}',
  widgets: '{count} widgets',
  filters: 'Filters',
  removeFilter: 'Remove filter {name}',
  notFound: 'Nothing is shown at {path}.',
  dashboardError: 'This dashboard could not be loaded: {message}',
  sessionExpired: 'Your session has ended.',
  sessionExpiredHint: 'It resumes as soon as the page that shows this view renews it.',
  comments: 'Comments',
  openComments: 'Show comments',
  closeComments: 'Hide comments',
  newThreadsCount: '{count} new',
  newThreadsLabel: 'new threads: {count}',
  liveThread: 'Someone started a new thread.',
  liveReply: 'Someone replied.',
  filterOpen: 'Open',
  filterResolved: 'Resolved',
  filterAll: 'All',
  threadFilter: 'Which threads',
  newThread: 'Start a thread',
  newThreadLabel: 'New comment',
  post: 'Post',
  reply: 'Reply',
  replyLabel: 'Reply to this thread',
  edit: 'Edit',
  save: 'Save',
  cancel: 'Cancel',
  delete: 'Delete',
  confirmDelete: 'Delete this comment?',
  resolve: 'Resolve',
  reopen: 'Re-open',
  resolved: 'Resolved',
  edited: 'edited',
  loadMore: 'Load more',
  noThreads: 'No threads yet.',
  deletedUser: 'Deleted user',
  you: 'you',
  mentionSuggestions: 'People to mention',
  threadBy: 'Thread by {name}, {time}',
  editLabel: 'Edit comment',
  composeHint: 'Type @ to mention someone. Ctrl+Enter posts.',
  characterCount: '{count} / {max} characters',
  bodyTooLong: 'Too long: a comment has at most {max} characters.',
  commentPosted: 'Comment posted.',
  replyPosted: 'Reply posted.',
  commentSaved: 'Comment saved.',
  commentDeleted: 'Comment deleted.',
  threadDeleted: 'Thread deleted.',
  threadResolved: 'Thread resolved.',
  threadReopened: 'Thread re-opened.',
  noOpenThreads: 'No open threads.',
  noResolvedThreads: 'No resolved threads.',
  commentsError: 'Comments could not be loaded: {message}',
  actionFailed: 'That did not work: {message}',
  retry: 'Try again',
  chatTitle: 'Ask a question',
  chatUnavailable: 'Questions in plain language are not set up on this svc server.',
  appTitle: 'App',
  appUnavailable: 'This app view has nothing to show here yet.',
  widgetNoData: 'No data source is connected to this widget yet.',
  widgetError: 'This widget could not load its data.',
  widgetEmpty: 'No data for these filters.',
  widgetForbidden: 'This widget is not available to you.',
  filterForbidden: 'This filter is not available to you.',
  drillForbidden: 'These rows are not available to you.',
  truncated: 'Showing the first {count} rows.',
  allValues: 'All',
  from: 'from',
  to: 'to',
  timeGrain: 'Time grain',
  asDesigned: 'As designed',
  field: 'Measure',
  askTitle: 'Ask a question',
  exportMenu: 'Export',
  exportWidget: 'Export {title}',
  exportAs: 'Export {title} as {format}',
  exportDashboard: 'Export the dashboard',
  drillTitle: '{title}: rows behind {member}',
  drillRows: '{count} rows',
  drillRowsOf: 'The first {shown} of {total} rows',
  drillCsv: 'Download these rows as CSV',
  back: 'Back to the dashboard',
  ask: 'Ask',
  askPlaceholder: 'Ask about your data, e.g. revenue by category',
  thinking: 'Thinking…',
};

export type Messages = typeof en;
export type MessageKey = keyof Messages;

const catalogues: Record<string, Partial<Messages>> = {
  en,
  de: {
    newThreadsCount: '{count} neu', newThreadsLabel: 'neue Diskussionen: {count}', liveThread: 'Jemand hat eine neue Diskussion begonnen.', liveReply: 'Jemand hat geantwortet.',
    widgetForbidden: 'Dieses Element ist für Sie nicht verfügbar.', filterForbidden: 'Dieser Filter ist für Sie nicht verfügbar.', drillForbidden: 'Diese Zeilen sind für Sie nicht verfügbar.',
    widgetError: 'Dieses Element konnte seine Daten nicht laden.', widgetEmpty: 'Keine Daten für diese Filter.', allValues: 'Alle', back: 'Zurück zum Dashboard',
    drillRows: '{count} Zeilen', drillRowsOf: 'Die ersten {shown} von {total} Zeilen', drillCsv: 'Diese Zeilen als CSV herunterladen', timeGrain: 'Zeitraster', field: 'Kennzahl',
    loading: 'Wird geladen…', updated: 'Aktualisiert {time}', widgets: '{count} Elemente', filters: 'Filter', removeFilter: 'Filter {name} entfernen',
    notFound: 'Unter {path} gibt es nichts anzuzeigen.', dashboardError: 'Dieses Dashboard konnte nicht geladen werden: {message}',
    sessionExpired: 'Ihre Sitzung ist abgelaufen.', sessionExpiredHint: 'Sie wird fortgesetzt, sobald die umgebende Seite sie erneuert.',
    comments: 'Kommentare', openComments: 'Kommentare anzeigen', closeComments: 'Kommentare ausblenden', filterOpen: 'Offen', filterResolved: 'Erledigt', filterAll: 'Alle',
    threadFilter: 'Welche Diskussionen', newThread: 'Diskussion beginnen', newThreadLabel: 'Neuer Kommentar', post: 'Senden', reply: 'Antworten', replyLabel: 'Auf diese Diskussion antworten',
    edit: 'Bearbeiten', save: 'Speichern', cancel: 'Abbrechen', delete: 'Löschen', confirmDelete: 'Diesen Kommentar löschen?', resolve: 'Erledigen', reopen: 'Wieder öffnen',
    resolved: 'Erledigt', edited: 'bearbeitet', loadMore: 'Mehr laden', noThreads: 'Noch keine Diskussionen.', deletedUser: 'Gelöschter Benutzer', you: 'Sie',
    mentionSuggestions: 'Personen zum Erwähnen', chatTitle: 'Eine Frage stellen', chatUnavailable: 'Fragen in natürlicher Sprache sind auf diesem svc-Server nicht eingerichtet.',
    appTitle: 'App', appUnavailable: 'Diese App-Ansicht hat hier noch nichts anzuzeigen.', widgetNoData: 'Mit diesem Element ist noch keine Datenquelle verbunden.',
    threadBy: 'Diskussion von {name}, {time}', editLabel: 'Kommentar bearbeiten', composeHint: 'Mit @ erwähnen Sie jemanden. Strg+Eingabe sendet.',
    characterCount: '{count} / {max} Zeichen', bodyTooLong: 'Zu lang: Ein Kommentar hat höchstens {max} Zeichen.', commentPosted: 'Kommentar gesendet.', replyPosted: 'Antwort gesendet.',
    commentSaved: 'Kommentar gespeichert.', commentDeleted: 'Kommentar gelöscht.', threadDeleted: 'Diskussion gelöscht.', threadResolved: 'Diskussion erledigt.', threadReopened: 'Diskussion wieder geöffnet.',
    noOpenThreads: 'Keine offenen Diskussionen.', noResolvedThreads: 'Keine erledigten Diskussionen.', commentsError: 'Kommentare konnten nicht geladen werden: {message}',
    actionFailed: 'Das hat nicht geklappt: {message}', retry: 'Erneut versuchen',
  },
  fr: {
    newThreadsCount: '{count} nouv.', newThreadsLabel: 'nouvelles discussions : {count}', liveThread: 'Quelqu’un a lancé une discussion.', liveReply: 'Quelqu’un a répondu.',
    widgetForbidden: 'Cet élément ne vous est pas accessible.', filterForbidden: 'Ce filtre ne vous est pas accessible.', drillForbidden: 'Ces lignes ne vous sont pas accessibles.',
    loading: 'Chargement…', updated: 'Mis à jour {time}', widgets: '{count} éléments', filters: 'Filtres', removeFilter: 'Retirer le filtre {name}',
    notFound: 'Rien à afficher à {path}.', dashboardError: "Ce tableau de bord n'a pas pu être chargé : {message}",
    sessionExpired: 'Votre session a expiré.', sessionExpiredHint: 'Elle reprendra dès que la page qui affiche cette vue la renouvellera.',
    comments: 'Commentaires', openComments: 'Afficher les commentaires', closeComments: 'Masquer les commentaires', filterOpen: 'Ouverts', filterResolved: 'Résolus', filterAll: 'Tous',
    threadFilter: 'Quelles discussions', newThread: 'Lancer une discussion', newThreadLabel: 'Nouveau commentaire', post: 'Publier', reply: 'Répondre', replyLabel: 'Répondre à cette discussion',
    edit: 'Modifier', save: 'Enregistrer', cancel: 'Annuler', delete: 'Supprimer', confirmDelete: 'Supprimer ce commentaire ?', resolve: 'Résoudre', reopen: 'Rouvrir',
    resolved: 'Résolu', edited: 'modifié', loadMore: 'Charger plus', noThreads: 'Aucune discussion.', deletedUser: 'Utilisateur supprimé', you: 'vous',
    mentionSuggestions: 'Personnes à mentionner', chatTitle: 'Poser une question', chatUnavailable: "Les questions en langage naturel ne sont pas configurées sur ce serveur svc.",
    appTitle: 'Application', appUnavailable: "Cette vue d'application n'a encore rien à afficher.", widgetNoData: "Aucune source de données n'est encore reliée à cet élément.",
    threadBy: 'Discussion de {name}, {time}', editLabel: 'Modifier le commentaire', composeHint: 'Tapez @ pour mentionner quelqu’un. Ctrl+Entrée publie.',
    characterCount: '{count} / {max} caractères', bodyTooLong: 'Trop long : un commentaire compte au plus {max} caractères.', commentPosted: 'Commentaire publié.', replyPosted: 'Réponse publiée.',
    commentSaved: 'Commentaire enregistré.', commentDeleted: 'Commentaire supprimé.', threadDeleted: 'Discussion supprimée.', threadResolved: 'Discussion résolue.', threadReopened: 'Discussion rouverte.',
    noOpenThreads: 'Aucune discussion ouverte.', noResolvedThreads: 'Aucune discussion résolue.', commentsError: "Les commentaires n'ont pas pu être chargés : {message}",
    actionFailed: "Cela n'a pas fonctionné : {message}", retry: 'Réessayer',
  },
  es: {
    newThreadsCount: '{count} nuevas', newThreadsLabel: 'conversaciones nuevas: {count}', liveThread: 'Alguien inició una conversación.', liveReply: 'Alguien respondió.',
    widgetForbidden: 'Este elemento no está disponible para ti.', filterForbidden: 'Este filtro no está disponible para ti.', drillForbidden: 'Estas filas no están disponibles para ti.',
    loading: 'Cargando…', updated: 'Actualizado {time}', widgets: '{count} elementos', filters: 'Filtros', removeFilter: 'Quitar el filtro {name}',
    notFound: 'No hay nada que mostrar en {path}.', dashboardError: 'No se pudo cargar este panel: {message}',
    sessionExpired: 'Tu sesión ha caducado.', sessionExpiredHint: 'Se reanudará en cuanto la página que muestra esta vista la renueve.',
    comments: 'Comentarios', openComments: 'Mostrar comentarios', closeComments: 'Ocultar comentarios', filterOpen: 'Abiertos', filterResolved: 'Resueltos', filterAll: 'Todos',
    threadFilter: 'Qué conversaciones', newThread: 'Iniciar una conversación', newThreadLabel: 'Nuevo comentario', post: 'Publicar', reply: 'Responder', replyLabel: 'Responder a esta conversación',
    edit: 'Editar', save: 'Guardar', cancel: 'Cancelar', delete: 'Eliminar', confirmDelete: '¿Eliminar este comentario?', resolve: 'Resolver', reopen: 'Reabrir',
    resolved: 'Resuelto', edited: 'editado', loadMore: 'Cargar más', noThreads: 'Aún no hay conversaciones.', deletedUser: 'Usuario eliminado', you: 'tú',
    mentionSuggestions: 'Personas para mencionar', chatTitle: 'Haz una pregunta', chatUnavailable: 'Las preguntas en lenguaje natural no están configuradas en este servidor svc.',
    appTitle: 'Aplicación', appUnavailable: 'Esta vista de aplicación aún no tiene nada que mostrar.', widgetNoData: 'Todavía no hay una fuente de datos conectada a este elemento.',
    threadBy: 'Conversación de {name}, {time}', editLabel: 'Editar comentario', composeHint: 'Escribe @ para mencionar a alguien. Ctrl+Intro publica.',
    characterCount: '{count} / {max} caracteres', bodyTooLong: 'Demasiado largo: un comentario tiene como máximo {max} caracteres.', commentPosted: 'Comentario publicado.', replyPosted: 'Respuesta publicada.',
    commentSaved: 'Comentario guardado.', commentDeleted: 'Comentario eliminado.', threadDeleted: 'Conversación eliminada.', threadResolved: 'Conversación resuelta.', threadReopened: 'Conversación reabierta.',
    noOpenThreads: 'No hay conversaciones abiertas.', noResolvedThreads: 'No hay conversaciones resueltas.', commentsError: 'No se pudieron cargar los comentarios: {message}',
    actionFailed: 'No ha funcionado: {message}', retry: 'Reintentar',
  },
  pt: {
    newThreadsCount: '{count} novas', newThreadsLabel: 'conversas novas: {count}', liveThread: 'Alguém iniciou uma conversa.', liveReply: 'Alguém respondeu.',
    widgetForbidden: 'Este elemento não está disponível para você.', filterForbidden: 'Este filtro não está disponível para você.', drillForbidden: 'Estas linhas não estão disponíveis para você.',
    loading: 'Carregando…', updated: 'Atualizado {time}', widgets: '{count} elementos', filters: 'Filtros', removeFilter: 'Remover o filtro {name}',
    notFound: 'Não há nada para mostrar em {path}.', dashboardError: 'Não foi possível carregar este painel: {message}',
    sessionExpired: 'Sua sessão expirou.', sessionExpiredHint: 'Ela será retomada assim que a página que exibe esta visão a renovar.',
    comments: 'Comentários', openComments: 'Mostrar comentários', closeComments: 'Ocultar comentários', filterOpen: 'Abertos', filterResolved: 'Resolvidos', filterAll: 'Todos',
    threadFilter: 'Quais conversas', newThread: 'Iniciar uma conversa', newThreadLabel: 'Novo comentário', post: 'Publicar', reply: 'Responder', replyLabel: 'Responder a esta conversa',
    edit: 'Editar', save: 'Salvar', cancel: 'Cancelar', delete: 'Excluir', confirmDelete: 'Excluir este comentário?', resolve: 'Resolver', reopen: 'Reabrir',
    resolved: 'Resolvido', edited: 'editado', loadMore: 'Carregar mais', noThreads: 'Ainda não há conversas.', deletedUser: 'Usuário excluído', you: 'você',
    mentionSuggestions: 'Pessoas para mencionar', chatTitle: 'Faça uma pergunta', chatUnavailable: 'Perguntas em linguagem natural não estão configuradas neste servidor svc.',
    appTitle: 'Aplicativo', appUnavailable: 'Esta visão de aplicativo ainda não tem nada para mostrar.', widgetNoData: 'Ainda não há uma fonte de dados ligada a este elemento.',
    threadBy: 'Conversa de {name}, {time}', editLabel: 'Editar comentário', composeHint: 'Digite @ para mencionar alguém. Ctrl+Enter publica.',
    characterCount: '{count} / {max} caracteres', bodyTooLong: 'Longo demais: um comentário tem no máximo {max} caracteres.', commentPosted: 'Comentário publicado.', replyPosted: 'Resposta publicada.',
    commentSaved: 'Comentário salvo.', commentDeleted: 'Comentário excluído.', threadDeleted: 'Conversa excluída.', threadResolved: 'Conversa resolvida.', threadReopened: 'Conversa reaberta.',
    noOpenThreads: 'Não há conversas abertas.', noResolvedThreads: 'Não há conversas resolvidas.', commentsError: 'Não foi possível carregar os comentários: {message}',
    actionFailed: 'Não deu certo: {message}', retry: 'Tentar novamente',
  },
};

/** The catalogue language of a locale: its primary subtag when svc speaks it, else English. */
export function languageOf(locale: string): string {
  const language = locale.split('-')[0]!.toLowerCase();
  return Object.hasOwn(catalogues, language) ? language : 'en';
}

/** The embed's `t()`: a message of the catalogue, with `{name}` placeholders filled (numbers in the locale's format). */
export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

/** A translator for a locale: `t('updated', { time })`. */
export function translator(locale: string): Translate {
  const catalogue = catalogues[languageOf(locale)]!;
  // Made on first use (see formattersFor): most messages have no number.
  let numbers: Intl.NumberFormat | undefined;
  return (key, values) => {
    const template = catalogue[key] ?? en[key];
    return values === undefined ? template : template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = values[name];
      return typeof value === 'number' ? (numbers ??= new Intl.NumberFormat(locale)).format(value) : String(value ?? '');
    });
  };
}
