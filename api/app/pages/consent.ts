/**
 * The consent screen of the authorization server (SPEC "Authentication"; D26, D28): the person signs in (second factor
 * included) in the application, sees the application, the client and what it asks to read grouped by area, and ticks
 * scopes and shops — only what the client asked for and the person may see is offered, sensitive scopes marked and
 * unticked. The token then carries exactly what was ticked. Also: the person's Connections, with revoke.
 */
import express, { type Request, type Response, type Router } from 'express';
import { allScopes, isScope, type Scope } from '../../../src/auth/scopes.js';
import { scopesByArea } from '../../../src/auth/scopeWords.js';
import { AppError } from '../../../src/errors.js';
import { connectionsOf, recordConsent, revokeConnection } from '../../../src/oauth/connections.js';
import { grantableScopes, grantableWriteModes } from '../../../src/people/rights.js';
import { listShops } from '../../../src/queries/shops.js';
import { MCP_RESOURCE_PATH } from '../../oauth/provider.js';
import { field, fields } from '../forms.js';
import { ownOrigin, type ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { appState, currentPerson, requirePerson } from '../session.js';

/** Lets the consent form's redirect chain end at the client (browsers apply form-action to redirects too). */
function allowFormTarget(res: Response, redirectUri: string): void {
  const csp = res.getHeader('Content-Security-Policy');
  if (typeof csp !== 'string' || !URL.canParse(redirectUri)) return;
  const target = new URL(redirectUri);
  // Native apps may use custom schemes (RFC 8252): the scheme is then the source expression.
  const source = target.protocol === 'http:' || target.protocol === 'https:' ? target.origin : target.protocol;
  res.setHeader('Content-Security-Policy', csp.replace("form-action 'self'", `form-action 'self' ${source}`));
}

export function consentRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const providerOf = (req: Request) => {
    const origin = ownOrigin(deps.application, req);
    const provider = deps.oauth.providerFor(origin);
    if (!provider) throw new AppError('NOT_FOUND', 'This address has no authorization server; set PUBLIC_BASE_URL.');
    deps.oauth.prepare(origin, req, req.ip);
    return provider;
  };
  const details = async (req: Request, res: Response) => {
    try {
      const found = await providerOf(req).interactionDetails(req, res);
      if (found.uid !== req.params.uid) throw new Error('uid mismatch');
      return found;
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('NOT_FOUND', 'This sign-in request has expired or was already used. Start again from your application.');
    }
  };

  const consentPage = async (req: Request, res: Response, interaction: Awaited<ReturnType<typeof details>>, error: string | null = null, status = 200) => {
    const person = currentPerson(res);
    const provider = providerOf(req);
    const clientId = String(interaction.params.client_id);
    const client = await provider.Client.find(clientId);
    const requested = requestedScopes(interaction.params.scope);
    const allowed = new Set<string>(grantableScopes(person));
    const offered = requested.filter((s) => allowed.has(s));
    const shops = await listShops(db, person.accountId, person.shopCodes);
    allowFormTarget(res, String(interaction.params.redirect_uri ?? ''));
    renderPage(res, 'consent', {
      title: 'Allow access?', uid: interaction.uid, clientName: client?.clientName ?? clientId,
      // A metadata-document client is named by its address: show it, so a look-alike name cannot pass as another.
      clientAddress: /^https:\/\//.test(clientId) ? clientId : null,
      redirectHost: URL.canParse(String(interaction.params.redirect_uri)) ? new URL(String(interaction.params.redirect_uri)).host : null,
      groups: scopesByArea(offered), withheld: requested.filter((s) => !allowed.has(s)), shops: shops.map((s) => ({ code: s.code, name: s.name })),
      allShopsAllowed: person.shopCodes === null, writeModes: grantableWriteModes(person), error,
    }, status);
  };

  router.get('/consent/:uid', async (req, res) => {
    const interaction = await details(req, res);
    const person = appState(res).person;
    if (!person) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(`/app/consent/${interaction.uid}`)}`);
    // The application's sign-in is the authorization server's: a new or different person finishes the login step.
    if (interaction.prompt.name === 'login' || interaction.session?.accountId !== person.id) {
      return providerOf(req).interactionFinished(req, res, { login: { accountId: person.id } }, { mergeWithLastSubmission: false });
    }
    await consentPage(req, res, interaction);
  });

  router.post('/consent/:uid', requirePerson, async (req, res) => {
    const interaction = await details(req, res);
    const provider = providerOf(req);
    const person = currentPerson(res);
    if (interaction.session?.accountId !== person.id) throw new AppError('STATE_CONFLICT', 'You signed in as someone else meanwhile. Start again from your application.');
    if (field(req.body, 'decision') !== 'allow') {
      return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The person did not allow access.' }, { mergeWithLastSubmission: false });
    }
    const clientId = String(interaction.params.client_id);
    const client = await provider.Client.find(clientId);
    const resource = `${provider.issuer}${MCP_RESOURCE_PATH}`;
    const grant = new provider.Grant({ accountId: person.id, clientId });
    const scopes = fields(req.body, 'scopes');
    const asked = String(interaction.params.scope ?? '').split(' ').filter(Boolean);
    grant.addResourceScope(resource, scopes.join(' '));
    const granted = [...scopes, ...asked.filter((s) => s === 'openid' || s === 'offline_access')];
    if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
    // What was asked and not ticked is recorded as refused, so the library does not ask again and the token is narrowed.
    const refused = asked.filter((s) => isScope(s) && !scopes.includes(s));
    if (refused.length > 0) {
      grant.rejectResourceScope(resource, refused.join(' '));
      grant.rejectOIDCScope(refused.join(' '));
    }
    const grantId = await grant.save();
    try {
      await recordConsent(db, person, {
        grantId, clientId, clientName: client?.clientName ?? clientId, requested: requestedScopes(interaction.params.scope), scopes,
        shops: field(req.body, 'shopChoice') === 'all' ? null : fields(req.body, 'shops'), writeMode: field(req.body, 'writeMode') || 'proposals',
      });
    } catch (error) {
      await grant.destroy();
      if (!(error instanceof AppError)) throw error;
      return consentPage(req, res, interaction, error.message, error.status);
    }
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  router.get('/connections', requirePerson, async (_req, res) => {
    renderPage(res, 'connections', { title: 'Connections', connections: await connectionsOf(db, currentPerson(res)) });
  });

  router.post('/connections/:id/revoke', requirePerson, async (req, res) => {
    await revokeConnection(db, currentPerson(res), String(req.params.id));
    res.redirect(303, '/app/connections');
  });
  return router;
}

/** The scopes a client asked for; a request naming none asks for every scope (the 401 challenge advertises them all). */
function requestedScopes(scope: unknown): Scope[] {
  const named = String(scope ?? '').split(' ').filter(isScope);
  return named.length > 0 ? named : [...allScopes];
}
