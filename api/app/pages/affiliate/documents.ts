/**
 * Programme document wording for staff (issue 24 point 3): every document of the account with its versions per
 * language and their state; a manager uploads a PDF or an HTML file as a new draft and publishes a draft; everyone
 * signed in views and downloads the versions' PDFs. The multipart body is read in api/app/index.ts before the CSRF
 * check. Never over MCP.
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../../src/errors.js';
import { mayManageAffiliate } from '../../../../src/affiliate/staff/commissions.js';
import { DOCUMENT_UPLOAD_MAX_BYTES, documentsForStaff, documentVersionPdf, publishDocumentVersion, uploadDocumentVersion } from '../../../../src/affiliate/staff/documents.js';
import { CONTENT_LANGUAGES } from '../../../../src/affiliate/content.js';
import { field } from '../../forms.js';
import type { ApplicationDeps } from '../../index.js';
import type { UploadedFile } from '../../multipart.js';
import { renderPage } from '../../render.js';
import { currentPerson, requirePermission, requirePerson } from '../../session.js';

export function affiliateDocumentsRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const manager = [requirePerson, requirePermission(mayManageAffiliate, 'manage the partner programme')];

  const documentsPage = async (_req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    renderPage(res, 'affiliate/documents', {
      title: 'Partner documents', documents: await documentsForStaff(db, person), languages: CONTENT_LANGUAGES, maxBytes: DOCUMENT_UPLOAD_MAX_BYTES,
      canManage: mayManageAffiliate(person) && !person.shopCodes, notice: null, error: null, ...extra,
    }, status);
  };

  router.get('/affiliate/documents', requirePerson, async (req, res) => documentsPage(req, res));

  router.post('/affiliate/documents/:documentId/upload', ...manager, async (req, res) => {
    const file = (req.body as Record<string, unknown>).file as UploadedFile | undefined;
    try {
      const result = await uploadDocumentVersion(db, currentPerson(res), String(req.params.documentId), field(req.body, 'language'), file, now());
      await documentsPage(req, res, {
        notice: `Version ${result.version} (${result.language}) uploaded as a draft from ${result.format.toUpperCase()}${result.sanitised ? '; the HTML was sanitised (scripts, styles and unknown tags removed)' : ''}. Publish it when it is ready.`,
        uploaded: result.versionId,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await documentsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  router.post('/affiliate/documents/versions/:versionId/publish', ...manager, async (req, res) => {
    try {
      const result = await publishDocumentVersion(db, currentPerson(res), String(req.params.versionId), now());
      await documentsPage(req, res, {
        notice: `Version ${result.version} (${result.language}) published${result.superseded !== null ? `; version ${result.superseded} is superseded` : ''}.`,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await documentsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  router.get('/affiliate/documents/versions/:versionId/pdf', requirePerson, async (req, res) => {
    const pdf = await documentVersionPdf(db, currentPerson(res), String(req.params.versionId));
    const disposition = req.query.download === '1' ? 'attachment' : 'inline';
    res.status(200).type('application/pdf').setHeader('Content-Disposition', `${disposition}; filename="${pdf.fileName}"`);
    res.send(pdf.content);
  });

  return router;
}
